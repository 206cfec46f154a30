public import ArgumentParsing

extension DepotConfiguration {
    /// Options that cannot work together, as the error naming them; nil when the combination is usable.
    /// `depot serve` prints it as a usage error (exit 64); `DepotApp.start` refuses it as a configuration error.
    ///
    /// `--consumption-info on` answers Apple from the delivery record: with `--delivery-record off` nothing is
    /// recorded, so every purchase would be answered as undelivered (`UNDELIVERED_OTHER`, 0, `GRANT_FULL`, an
    /// invitation to refund), which is worse than not answering. `--webhook-url` and `--webhook-secret` come
    /// together: a receiver cannot check unsigned events, and a key without a receiver is a typo.
    public var conflictingOptions: ConfigurationError? {
        switch (webhookURL, webhookSecret) {
        case (.some, nil): return ConfigurationError(option: "webhook-secret", "is required with --webhook-url (at least 32 characters)")
        case (nil, .some): return ConfigurationError(option: "webhook-url", "is required with --webhook-secret")
        default: break
        }
        if consumptionInfo.isOn && !deliveryRecord.isOn {
            return ConfigurationError(option: "consumption-info",
                                      "on needs --delivery-record on (the answers to Apple come from the delivery record; with --delivery-record off every purchase would be answered as undelivered)")
        }
        return nil
    }
}
