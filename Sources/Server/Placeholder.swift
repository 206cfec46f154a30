// Server
