import DepotWire
import Foundation

/// Reads `catalog/products.json` and reports every problem, not just the first.
public enum CatalogDecoder {
    /// Decodes and validates a catalog. `file` is used in problem reports.
    public static func decode(_ data: [UInt8], file: String) -> Result<Catalog, CatalogProblems> {
        var problems: [CatalogProblem] = []
        func problem(_ field: String, _ message: String) {
            problems.append(CatalogProblem(file: file, field: field, message: message))
        }
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: Data(data), options: [])
        } catch {
            return .failure(CatalogProblems([CatalogProblem(file: file, field: "", message: "not valid JSON (\(Self.reason(error)))")]))
        }
        guard let object = root as? [String: Any] else {
            return .failure(CatalogProblems([CatalogProblem(file: file, field: "", message: "the top level must be an object with a \"products\" array")]))
        }
        guard let list = object["products"] as? [Any] else {
            return .failure(CatalogProblems([CatalogProblem(file: file, field: "products", message: "missing, or not an array")]))
        }
        var products: [Product] = []
        var seen: [String: Int] = [:]
        for (index, element) in list.enumerated() {
            let path = "products[\(index)]"
            guard let entry = element as? [String: Any] else {
                problem(path, "must be an object")
                continue
            }
            let id = entry["id"] as? String
            if let id {
                if !Identifiers.isValidProductID(id) {
                    problem("\(path).id", "\"\(id)\" is not a product ID (1 to 255 characters of A-Z a-z 0-9 . _ -)")
                } else if let first = seen[id] {
                    problem("\(path).id", "\"\(id)\" is already used by products[\(first)]")
                } else {
                    seen[id] = index
                }
            } else {
                problem("\(path).id", entry["id"] == nil ? "missing" : "must be a string")
            }
            var type: ProductType?
            if let raw = entry["type"] as? String {
                type = ProductType(rawValue: raw)
                if type == nil {
                    problem("\(path).type", "\"\(raw)\" is not one of \(ProductType.allCases.map(\.rawValue).joined(separator: ", "))")
                }
            } else {
                problem("\(path).type", entry["type"] == nil ? "missing" : "must be a string")
            }
            let title = entry["title"] as? String
            if title == nil {
                problem("\(path).title", entry["title"] == nil ? "missing" : "must be a string")
            } else if title!.isEmpty {
                problem("\(path).title", "must not be empty")
            }
            var description = ""
            if let value = entry["description"] {
                if let text = value as? String { description = text } else if !(value is NSNull) {
                    problem("\(path).description", "must be a string")
                }
            }
            var pack: String?
            if let value = entry["pack"], !(value is NSNull) {
                if let text = value as? String {
                    if Identifiers.isValidPackID(text) { pack = text } else {
                        problem("\(path).pack", "\"\(text)\" is not a pack ID (1 to 128 characters of A-Z a-z 0-9 . _ -, not starting with a dot)")
                    }
                } else {
                    problem("\(path).pack", "must be a string or null")
                }
            }
            var status: ProductStatus?
            if let raw = entry["status"] as? String {
                status = ProductStatus(rawValue: raw)
                if status == nil { problem("\(path).status", "\"\(raw)\" is not one of live, retired") }
            } else {
                problem("\(path).status", entry["status"] == nil ? "missing" : "must be a string")
            }
            if let id, let type, let title, !title.isEmpty, let status {
                products.append(Product(id: id, type: type, title: title, description: description, pack: pack, status: status))
            }
        }
        return problems.isEmpty ? .success(Catalog(products: products)) : .failure(CatalogProblems(problems))
    }

    /// Encodes a catalog in the canonical, human-editable layout (two-space indentation, file order kept).
    public static func encode(_ catalog: Catalog) -> [UInt8] {
        var out = "{\n  \"products\": ["
        for (i, p) in catalog.products.enumerated() {
            out += i == 0 ? "\n" : ",\n"
            out += "    {\n"
            out += "      \"id\": \(JSONText.string(p.id)),\n"
            out += "      \"type\": \(JSONText.string(p.type.rawValue)),\n"
            out += "      \"title\": \(JSONText.string(p.title)),\n"
            out += "      \"description\": \(JSONText.string(p.description)),\n"
            if let pack = p.pack { out += "      \"pack\": \(JSONText.string(pack)),\n" }
            out += "      \"status\": \(JSONText.string(p.status.rawValue))\n"
            out += "    }"
        }
        out += catalog.products.isEmpty ? "]\n}\n" : "\n  ]\n}\n"
        return Array(out.utf8)
    }

    private static func reason(_ error: any Error) -> String {
        let ns = error as NSError
        if let detail = ns.userInfo["NSDebugDescription"] as? String { return detail }
        return ns.localizedDescription
    }
}
