import Foundation
import Testing
import DepotCore

/// spec §2.1: every field rule of `catalog/products.json`, and how problems are reported (file and field).
@Suite struct CatalogDecodingTests {
    static let file = "catalog/products.json"

    /// A valid product object with one field replaced (`nil` value removes the field); `raw` is JSON text.
    static func product(_ changes: [String: String?] = [:]) -> String {
        var fields: [(String, String?)] = [
            ("id", "\"com.example.a\""), ("type", "\"consumable\""), ("title", "\"A\""),
            ("description", "\"About A\""), ("pack", "\"levelA\""), ("status", "\"live\""),
        ]
        for (name, value) in changes {
            if let index = fields.firstIndex(where: { $0.0 == name }) { fields[index].1 = value } else { fields.append((name, value)) }
        }
        return "{" + fields.compactMap { name, value in value.map { "\"\(name)\": \($0)" } }.joined(separator: ", ") + "}"
    }

    static func catalog(_ products: [String]) -> [UInt8] {
        Array("{\"products\": [\(products.joined(separator: ", "))]}".utf8)
    }

    static func problems(_ bytes: [UInt8]) -> [CatalogProblem] {
        switch CatalogDecoder.decode(bytes, file: file) {
        case .success: return []
        case .failure(let problems): return problems.problems
        }
    }

    // MARK: - One field at a time

    struct FieldRow: Sendable, CustomTestStringConvertible {
        let field: String
        /// JSON text of the value; nil removes the field.
        let value: String?
        /// The reported field path, or nil when the value is accepted.
        let problemAt: String?
        let testDescription: String

        init(_ field: String, _ value: String?, _ problemAt: String?, _ label: String) {
            self.field = field
            self.value = value
            self.problemAt = problemAt
            testDescription = "\(field) \(label) → \(problemAt ?? "accepted")"
        }
    }

    static let longID = String(repeating: "a", count: 255)
    static let tooLongID = String(repeating: "a", count: 256)
    static let longPack = String(repeating: "p", count: 128)
    static let tooLongPack = String(repeating: "p", count: 129)

    static let fieldRows: [FieldRow] = [
        // id: [A-Za-z0-9._-], 1...255.
        FieldRow("id", "\"com.Example-app_2.x\"", nil, "every allowed character class"),
        FieldRow("id", "\"\(longID)\"", nil, "255 characters"),
        FieldRow("id", "\"\(tooLongID)\"", "products[0].id", "256 characters"),
        FieldRow("id", "\"\"", "products[0].id", "empty"),
        FieldRow("id", nil, "products[0].id", "missing"),
        FieldRow("id", "42", "products[0].id", "a number"),
        FieldRow("id", "null", "products[0].id", "null"),
        FieldRow("id", "\"com.example a\"", "products[0].id", "with a space"),
        FieldRow("id", "\"com/example\"", "products[0].id", "with a slash"),
        FieldRow("id", "\"com.exampl\u{00E9}\"", "products[0].id", "non-ASCII"),
        FieldRow("id", "\"com.example+1\"", "products[0].id", "with a plus"),
        // type: the four App Store types, exactly.
        FieldRow("type", "\"consumable\"", nil, "consumable"),
        FieldRow("type", "\"non-consumable\"", nil, "non-consumable"),
        FieldRow("type", "\"auto-renewable\"", nil, "auto-renewable"),
        FieldRow("type", "\"non-renewing\"", nil, "non-renewing"),
        FieldRow("type", "\"subscription\"", "products[0].type", "unknown"),
        FieldRow("type", "\"Consumable\"", "products[0].type", "wrong case"),
        FieldRow("type", "\"nonconsumable\"", "products[0].type", "without the dash"),
        FieldRow("type", nil, "products[0].type", "missing"),
        FieldRow("type", "1", "products[0].type", "a number"),
        // title: a non-empty string.
        FieldRow("title", "\"Level 2: Glacier \u{2744}\"", nil, "unicode"),
        FieldRow("title", "\"\"", "products[0].title", "empty"),
        FieldRow("title", nil, "products[0].title", "missing"),
        FieldRow("title", "[\"A\"]", "products[0].title", "an array"),
        FieldRow("title", "null", "products[0].title", "null"),
        // description: optional string.
        FieldRow("description", nil, nil, "absent"),
        FieldRow("description", "\"\"", nil, "empty"),
        FieldRow("description", "null", nil, "null"),
        FieldRow("description", "7", "products[0].description", "a number"),
        FieldRow("description", "{}", "products[0].description", "an object"),
        // pack: optional pack ID ([A-Za-z0-9._-], 1...128, no leading dot).
        FieldRow("pack", nil, nil, "absent"),
        FieldRow("pack", "null", nil, "null"),
        FieldRow("pack", "\"\(longPack)\"", nil, "128 characters"),
        FieldRow("pack", "\"\(tooLongPack)\"", "products[0].pack", "129 characters"),
        FieldRow("pack", "\"\"", "products[0].pack", "empty"),
        FieldRow("pack", "\".staging\"", "products[0].pack", "leading dot"),
        FieldRow("pack", "\"..\"", "products[0].pack", "dot-dot"),
        FieldRow("pack", "\"a/b\"", "products[0].pack", "with a slash"),
        FieldRow("pack", "3", "products[0].pack", "a number"),
        // status: live | retired.
        FieldRow("status", "\"live\"", nil, "live"),
        FieldRow("status", "\"retired\"", nil, "retired"),
        FieldRow("status", "\"draft\"", "products[0].status", "unknown"),
        FieldRow("status", "\"Live\"", "products[0].status", "wrong case"),
        FieldRow("status", nil, "products[0].status", "missing"),
        FieldRow("status", "true", "products[0].status", "a boolean"),
    ]

    @Test(arguments: fieldRows)
    func fieldRule(_ row: FieldRow) {
        let found = Self.problems(Self.catalog([Self.product([row.field: row.value])]))
        if let expected = row.problemAt {
            #expect(found.map(\.field) == [expected], "\(found)")
            #expect(found.allSatisfy { $0.file == Self.file && !$0.message.isEmpty })
            #expect(found.first?.description.hasPrefix("\(Self.file): \(expected): ") == true)
        } else {
            #expect(found.isEmpty, "\(found)")
        }
    }

    @Test func acceptedValuesAreKept() throws {
        let bytes = Self.catalog([
            Self.product(["id": "\"b\"", "type": "\"auto-renewable\"", "status": "\"retired\"", "description": nil]),
            Self.product(["id": "\"a\"", "type": "\"non-renewing\"", "pack": "null"]),
        ])
        let catalog = try CatalogDecoder.decode(bytes, file: Self.file).get()
        #expect(catalog.products == [
            Product(id: "b", type: .autoRenewable, title: "A", description: "", pack: "levelA", status: .retired),
            Product(id: "a", type: .nonRenewing, title: "A", description: "About A", pack: nil, status: .live),
        ])
        #expect(catalog.liveProducts.map(\.id) == ["a"])
    }

    @Test func duplicateIDIsReportedAtTheSecondOccurrence() {
        let found = Self.problems(Self.catalog([
            Self.product(["id": "\"dup\""]), Self.product(["id": "\"other\""]), Self.product(["id": "\"dup\""]),
        ]))
        #expect(found.map(\.field) == ["products[2].id"])
        #expect(found.first?.message.contains("products[0]") == true)
    }

    @Test func idsDifferingOnlyInCaseAreDistinct() {
        #expect(Self.problems(Self.catalog([Self.product(["id": "\"a.B\""]), Self.product(["id": "\"a.b\""])])).isEmpty)
    }

    // MARK: - Several problems at once

    @Test func everyProblemIsReportedWithItsPath() {
        let found = Self.problems(Self.catalog([
            Self.product(),
            Self.product(["id": "\"bad id\"", "status": "\"gone\""]),
            Self.product(["id": "\"c\"", "type": "\"gift\"", "title": "\"\""]),
            "17",
            Self.product(["id": "\"e\"", "pack": "\"../x\"", "description": "false"]),
        ]))
        #expect(found.map(\.field) == [
            "products[1].id", "products[1].status",
            "products[2].type", "products[2].title",
            "products[3]",
            "products[4].description", "products[4].pack",
        ])
        #expect(found.allSatisfy { $0.file == Self.file })
        let text = CatalogProblems(found).description
        #expect(text.split(separator: "\n").count == found.count)
        #expect(text.contains("catalog/products.json: products[2].type: \"gift\" is not one of"))
    }

    // MARK: - Not JSON, wrong top level

    struct WholeFileRow: Sendable, CustomTestStringConvertible {
        let text: String
        let field: String
        var testDescription: String { "\(text.debugDescription) → field \"\(field)\"" }
    }

    static let wholeFileRows: [WholeFileRow] = [
        WholeFileRow(text: "", field: ""),
        WholeFileRow(text: "{", field: ""),
        WholeFileRow(text: "{\"products\": [}", field: ""),
        WholeFileRow(text: "products: []", field: ""),
        WholeFileRow(text: "{\"products\": []} trailing", field: ""),
        WholeFileRow(text: "[]", field: ""),
        WholeFileRow(text: "[{\"id\": \"a\"}]", field: ""),
        WholeFileRow(text: "\"products\"", field: ""),
        WholeFileRow(text: "null", field: ""),
        WholeFileRow(text: "{}", field: "products"),
        WholeFileRow(text: "{\"Products\": []}", field: "products"),
        WholeFileRow(text: "{\"products\": {}}", field: "products"),
        WholeFileRow(text: "{\"products\": null}", field: "products"),
        WholeFileRow(text: "{\"products\": \"a\"}", field: "products"),
        WholeFileRow(text: "{\"products\": [1]}", field: "products[0]"),
        WholeFileRow(text: "{\"products\": [[]]}", field: "products[0]"),
    ]

    @Test(arguments: wholeFileRows)
    func wholeFileProblem(_ row: WholeFileRow) {
        let found = Self.problems(Array(row.text.utf8))
        #expect(found.count == 1, "\(found)")
        #expect(found.first?.field == row.field)
        #expect(found.first?.file == Self.file)
    }

    @Test func notJSONSaysSo() {
        #expect(Self.problems(Array("{\"products\": [".utf8)).first?.message.contains("not valid JSON") == true)
    }

    @Test func emptyProductListIsValid() throws {
        #expect(try CatalogDecoder.decode(Array("{\"products\": []}".utf8), file: Self.file).get().products.isEmpty)
    }

    // MARK: - Encoding round trip (what `depot publish` writes)

    @Test func encodedCatalogDecodesToTheSameProducts() throws {
        let catalog = Catalog(products: [
            Product(id: "z.last", type: .consumable, title: "Quote \" and \\ and \u{1} and é", description: "line\nbreak"),
            Product(id: "a.first", type: .nonConsumable, title: "T", description: "", pack: "p1", status: .retired),
        ])
        let decoded = try CatalogDecoder.decode(CatalogDecoder.encode(catalog), file: Self.file).get()
        #expect(decoded == catalog)
        #expect(try CatalogDecoder.decode(CatalogDecoder.encode(Catalog(products: [])), file: Self.file).get().products.isEmpty)
    }
}
