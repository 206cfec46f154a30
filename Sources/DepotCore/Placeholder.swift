// DepotCore
