import DepotCore
import DepotWire
import Foundation
import Server

/// Editing a product's text: what the console's products table needs beyond retire and un-retire.
extension AdminService {
    /// `PATCH /admin/v1/products/{id}` with `{"title": "...", "description": "..."}` (either or both): `200` with the
    /// product as the catalog now holds it; an unknown product `404`, a bad body `400`. The product lists show
    /// the new text after the catalog reload that follows.
    func editProduct(_ request: RouteRequest) -> Handling {
        let id = request.parameter("id")
        let log = logger.with(requestID: request.requestID)
        return .collectBody(limit: 64 * 1024) { [self] body in
            .later { [self] in
                let fields: (title: String?, description: String?)
                do throws(AdminFailure) {
                    fields = try Self.productEdit(body)
                } catch {
                    return error.answer.response(.adminProductEdit)
                }
                // Under the same locks as every other catalog change: it rewrites the same `products.json`.
                let result: Result<Product, PublishError>
                do throws(AdminFailure) {
                    result = try await underPublishLock("edit of \(id)", log: log) { publisher throws(PublishError) in
                        try publisher.editProduct(productID: id, title: fields.title, description: fields.description)
                    }
                } catch {
                    return error.answer.response(.adminProductEdit)
                }
                switch result {
                case .failure(let error): return error.answer.response(.adminProductEdit)
                case .success(let product):
                    await reloadCatalog(log: log)
                    log.info(.catalogChanged, "edited the text of \(id) by the admin API")
                    return JSONAnswer.response(AdminProducts.Product(id: product.id, type: product.type.rawValue, title: product.title,
                                                                     description: product.description, pack: product.pack,
                                                                     status: product.status.rawValue), .adminProductEdit)
                }
            }
        }
    }

    /// The body of a product edit: a JSON object with `title` and/or `description` strings, nothing else.
    static func productEdit(_ body: [UInt8]) throws(AdminFailure) -> (title: String?, description: String?) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            throw .badPublishBody("The body must be a JSON object: {\"title\": \"...\", \"description\": \"...\"}.")
        }
        if let unknown = object.keys.sorted().first(where: { $0 != "title" && $0 != "description" }) {
            throw .badPublishBody("`\(unknown)` cannot be edited; only `title` and `description` can.")
        }
        let title = object["title"]
        let description = object["description"]
        guard title == nil || title is String, description == nil || description is String else {
            throw .badPublishBody("`title` and `description` must be strings.")
        }
        guard title != nil || description != nil else { throw .badPublishBody("Send `title`, `description` or both.") }
        return (title as? String, description as? String)
    }
}
