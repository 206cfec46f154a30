/// An array under construction; a class so that a nested container can keep filling it after it was placed.
final class JSONArray {
    var elements: [JSONValue] = []
}
