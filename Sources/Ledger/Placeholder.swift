// Ledger
