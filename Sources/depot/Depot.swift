@main
struct Depot {
    static func main() async {
        print("depot")
    }
}
