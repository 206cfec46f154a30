// DepotClient
