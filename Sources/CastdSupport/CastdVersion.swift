/// The version of castd and its clients (castd, castc, cast-mpris, cast-emulator say it with
/// --version). Its one source is the file VERSION at the top of the repository:
/// scripts/version.sh writes it here (and into the C and Python clients), and CI checks that it
/// did (scripts/version.sh --check).
public enum CastdVersion {
    public static let current = "0.1.0"
}
