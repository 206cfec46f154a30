// DepotServer
