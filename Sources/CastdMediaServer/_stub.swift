public enum WebVTT { public static func convert(bytes: [UInt8], name: String) throws -> [UInt8] { bytes } }
