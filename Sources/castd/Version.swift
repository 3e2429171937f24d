// castd's version. Its one source is the file VERSION at the top of the repository:
// scripts/version.sh writes it here (and into the C and Python clients), and CI checks that it
// did (scripts/version.sh --check).
let castdVersion = "0.1.0"
