public import ArgumentParsing
public import DepotCore
public import Ledger

// Domain enumerations that options take, each accepted by its raw values (`--account-policy first`).
// An enumeration of the configuration's own (`--log-format text|json`) conforms where it is declared.

extension AccountPolicy: EnumeratedOption {}

extension ProductType: EnumeratedOption {}
