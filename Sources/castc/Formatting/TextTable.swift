/// Rows of cells in aligned columns, two spaces apart, without trailing spaces.
enum TextTable {
    static func render(_ rows: [[String]]) -> String {
        let columns = rows.map(\.count).max() ?? 0
        var widths = Array(repeating: 0, count: columns)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count)
            }
            .joined(separator: "  ")
            .trimmingTrailingSpaces
        }
        .joined(separator: "\n")
    }
}

extension String {
    /// The string without spaces at its end (a row whose last cells are empty).
    var trimmingTrailingSpaces: String {
        var text = Substring(self)
        while text.last == " " { text.removeLast() }
        return String(text)
    }
}
