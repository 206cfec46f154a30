// DepotCrypto
