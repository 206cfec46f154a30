public import ArgumentParsing
public import Ledger

/// `--ledger` (scale-out §1): `sqlite`, `sqlite:PATH` or a PostgreSQL URI. A refusal says what is wrong
/// without repeating the text, which may hold a password; a value is shown again without its password.
extension LedgerLocation: OptionValue {
    public static var optionParser: OptionParser<LedgerLocation> {
        OptionParser(valueName: "LOCATION", parse: { (text: String) throws(InvalidOptionValue) -> LedgerLocation in
            do throws(LedgerError) {
                return try LedgerLocation(parsing: text)
            } catch {
                throw InvalidOptionValue(error.description)
            }
        }, format: { $0.description })
    }
}
