/// Encodes status lines and header fields for responses.
public enum ResponseHead {
    /// The reason phrase for a status code (RFC 9110 §15).
    public static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 416: "Range Not Satisfiable"
        case 417: "Expectation Failed"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        case 507: "Insufficient Storage"
        default: "Status \(status)"
        }
    }

    private static let statusLines: [Int: [UInt8]] = {
        var table: [Int: [UInt8]] = [:]
        for code in [100, 200, 201, 202, 204, 206, 301, 302, 303, 304, 307, 308, 400, 401, 403, 404, 405, 408, 409,
                     411, 412, 413, 414, 415, 416, 417, 422, 429, 431, 500, 501, 502, 503, 504, 505, 507] {
            table[code] = Array("HTTP/1.1 \(code) \(reasonPhrase(code))\r\n".utf8)
        }
        return table
    }()

    /// `HTTP/1.1 <code> <reason>\r\n`.
    public static func appendStatusLine(_ status: Int, to out: inout [UInt8]) {
        if let line = statusLines[status] {
            out.append(contentsOf: line)
        } else {
            out.append(contentsOf: "HTTP/1.1 \(status) \(reasonPhrase(status))\r\n".utf8)
        }
    }

    /// `Name: value\r\n` for every field.
    public static func appendFields(_ fields: HTTPFields, to out: inout [UInt8]) {
        for field in fields {
            out.append(contentsOf: field.displayName.utf8)
            out.append(0x3A); out.append(0x20)
            out.append(contentsOf: field.value.utf8)
            out.append(0x0D); out.append(0x0A)
        }
    }

    /// Decimal digits of a non-negative integer, without allocating a String.
    public static func appendDecimal(_ value: Int64, to out: inout [UInt8]) {
        if value == 0 { out.append(0x30); return }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = value
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buf in
            while n > 0 && count < 20 {
                buf[count] = UInt8(n % 10) + 0x30
                n /= 10
                count += 1
            }
            var i = count - 1
            while i >= 0 { out.append(buf[i]); i -= 1 }
        }
    }
}
