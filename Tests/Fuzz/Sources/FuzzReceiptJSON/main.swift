import DepotCore
import Foundation
import FuzzSupport

/// The JSON readers of purchases: `verifyReceipt` answers (and their evaluation), StoreKit transactions,
/// renewal infos and notification payloads.
private let now = Date(timeIntervalSince1970: 1_700_000_000)

func fuzzReceiptJSON(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    var input = FuzzInput(start, count)
    let choice = input.byte()
    let data = Data(input.rest)
    switch choice % 4 {
    case 0:
        if let response = try? VerifyReceiptResponse(json: data) {
            for purchase in response.purchases { _ = ReceiptEvaluation.state(of: purchase, now: now) }
            _ = try? ReceiptEvaluation(response: response, bundleID: response.bundleID ?? "com.example", now: now)
        }
    case 1: _ = try? JSONDecoder().decode(StoreKitTransaction.self, from: data)
    case 2: _ = try? JSONDecoder().decode(StoreKitRenewalInfo.self, from: data)
    default: _ = try? JSONDecoder().decode(StoreKitNotification.self, from: data)
    }
    return 0
}

runFuzzer(fuzzReceiptJSON)
