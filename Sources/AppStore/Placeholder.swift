// AppStore
