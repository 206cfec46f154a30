/// The check a signed App Store payload failed, in the order `SignedDataVerifier` runs them.
/// The raw values are the `check` strings of a `422 receipt_invalid` answer (spec §4.2).
public enum VerificationCheck: String, Sendable, CaseIterable {
    /// Not three base64url segments, header or payload not a JSON object, `x5c` missing or not an
    /// array of strings, or a payload without the fields its kind requires.
    case format
    /// Header `alg` is not `ES256`.
    case algorithm
    /// `x5c` does not hold exactly three certificates.
    case chain_length
    /// An `x5c` entry is not base64 DER of a certificate.
    case certificate
    /// Leaf and intermediate do not validate up to a configured root at the validation time.
    case chain
    /// The leaf or the intermediate lacks Apple's marker extension.
    case oid
    /// The ES256 signature over `header.payload` does not verify with the leaf key.
    case signature
    /// The payload is for another bundle ID.
    case bundle
    /// Production data that carries an `appAppleId` (a notification's `data`, an API answer) carries
    /// another one than the configured `--apple-app-id`.
    case app_id
    /// The environment is not accepted (Xcode, LocalTesting, unknown, or Sandbox when not allowed).
    case environment
}
