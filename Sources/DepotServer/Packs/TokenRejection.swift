/// Why a download token was refused (spec §4.3).
enum TokenRejection: Error, Sendable, Equatable {
    case missing
    case invalid
    case expired
    case wrongPack
    case revoked
}
