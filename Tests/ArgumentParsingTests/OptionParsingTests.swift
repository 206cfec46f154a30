import ArgumentParsing
import Foundation
import Testing

/// Declarations become a parser: flags, environment, defaults, types, ranges, enumerations, groups.
@Suite struct OptionParsingTests {
    @Test func declarationsComeFromTheProperties() {
        let declarations = SampleSettings.declarations
        #expect(declarations.map(\.name) == ["host", "port", "data", "verbose", "log", "format", "secret", "roots", "timeout", "upstream",
                                          "receipt-validation"])
        let port = declarations[1]
        #expect(port.flag == "--port")
        #expect(port.environmentName == "DEPOT_PORT")
        #expect(port.defaultText == "8080" && port.defaultIsValue)
        #expect(port.valueName == "PORT")
        #expect(declarations[2].valueName == "DIR")
        #expect(declarations[3].isSwitch && declarations[3].defaultText == "false")
        #expect(declarations[4].allowedValues == ["on", "off"] && declarations[4].valueName == "on|off")
        #expect(declarations[5].allowedValues == ["text", "json"] && declarations[5].defaultText == "text")
        #expect(declarations[6].defaultText == "none (signing off)" && !declarations[6].defaultIsValue)
        #expect(declarations[8].defaultText == "10")
        #expect(declarations[9].defaultText == "https://example.com/verify")
        #expect(declarations[10].valueName == "VALIDATION", "a long list of words is not the value name")
        #expect(declarations[10].allowedValues == ["auto", "server-api", "verify-receipt"])
        #expect(OptionDeclaration.environmentName(of: "apple-root-certs") == "DEPOT_APPLE_ROOT_CERTS")
    }

    @Test func defaultsWithoutArguments() throws {
        let parsed = try SampleSettings.parse([], environment: [:])
        #expect(parsed.host == "127.0.0.1" && parsed.port == 8080 && parsed.verbose == false && parsed.log == .on)
        #expect(parsed.secret == nil && parsed.roots == nil && parsed.timeout == 10)
        // Building the type outside a parse gives the same defaults.
        #expect(SampleSettings().port == 8080)
    }

    @Test func flagWinsOverEnvironmentWhichWinsOverDefault() throws {
        let fromEnvironment = try SampleSettings.parse([], environment: ["DEPOT_PORT": "9000", "DEPOT_HOST": "::1"])
        #expect(fromEnvironment.port == 9000 && fromEnvironment.host == "::1")
        let flagWins = try SampleSettings.parse(["--port", "0"], environment: ["DEPOT_PORT": "99999"])
        #expect(flagWins.port == 0)
        let equalsForm = try SampleSettings.parse(["--port=7"], environment: [:])
        #expect(equalsForm.port == 7)
    }

    @Test func typedValues() throws {
        let parsed = try SampleSettings.parse([
            "--data", "/srv/depot///", "--format", "json", "--log", "OFF", "--secret", "12345678", "--roots", "a.pem, b.der",
            "--timeout", "0.5", "--upstream", "http://127.0.0.1:9/v", "--receipt-validation", "server-api",
        ], environment: [:])
        #expect(parsed.receiptValidation == .serverAPI)
        #expect(parsed.data == "/srv/depot")
        #expect(parsed.format == .json)
        #expect(parsed.log == .off)
        #expect(parsed.secret == "12345678")
        #expect(parsed.roots == ["a.pem", "b.der"])
        #expect(parsed.timeout == 0.5)
        #expect(parsed.upstream.absoluteString == "http://127.0.0.1:9/v")
    }

    @Test(arguments: [
        (["--verbose"], true), (["--verbose", "false"], false), (["--verbose=no"], false), (["--verbose", "ON"], true),
        (["--verbose", "0"], false),
    ])
    func switches(_ arguments: [String], _ expected: Bool) throws {
        #expect(try SampleSettings.parse(arguments, environment: [:]).verbose == expected)
    }

    @Test func toggleAcceptsBooleanWords() throws {
        for (text, expected) in [("on", Toggle.on), ("true", .on), ("YES", .on), ("1", .on), ("off", .off), ("False", .off), ("no", .off), ("0", .off)] {
            #expect(try SampleSettings.parse(["--log", text], environment: [:]).log == expected, "\(text)")
        }
    }

    @Test func emptyEnvironmentMeansNoneForOptionalSettings() throws {
        let parsed = try SampleSettings.parse([], environment: ["DEPOT_SECRET": "", "DEPOT_ROOTS": ""])
        #expect(parsed.secret == nil)
        #expect(parsed.roots == nil)
    }

    struct BadSetting: Sendable, CustomTestStringConvertible {
        let arguments: [String]
        var environment: [String: String] = [:]
        let message: String
        var testDescription: String { (environment.map { "\($0.key)=\($0.value)" } + arguments).joined(separator: " ") }
    }

    @Test(arguments: [
        BadSetting(arguments: ["--port", "99999"], message: "--port: \"99999\" is not an integer in 0...65535"),
        BadSetting(arguments: ["--port", "abc"], message: "--port: \"abc\" is not an integer in 0...65535"),
        BadSetting(arguments: [], environment: ["DEPOT_PORT": "-1"], message: "--port: \"-1\" is not an integer in 0...65535"),
        BadSetting(arguments: ["--host="], message: "--host: must not be empty"),
        BadSetting(arguments: ["--format", "JSON"], message: "--format: \"JSON\" is not one of text, json"),
        BadSetting(arguments: [], environment: ["DEPOT_LOG": "maybe"], message: "--log: \"maybe\" is not one of on, off"),
        BadSetting(arguments: ["--verbose=perhaps"], message: "--verbose: \"perhaps\" is not true or false"),
        BadSetting(arguments: ["--secret", "short"], message: "--secret: must be at least 8 characters"),
        BadSetting(arguments: ["--timeout", "0"], message: "--timeout: \"0\" is not a positive number of seconds"),
        BadSetting(arguments: ["--timeout", "soon"], message: "--timeout: \"soon\" is not a positive number of seconds"),
        BadSetting(arguments: ["--upstream", "ftp://example.com/x"], message: "--upstream: \"ftp://example.com/x\" is not an http(s) URL"),
    ])
    func badSettingValuesAreConfigurationErrorsNamingTheOption(_ row: BadSetting) {
        #expect {
            _ = try SampleSettings.parse(row.arguments, environment: row.environment)
        } throws: { error in
            (error as? ConfigurationError)?.description == row.message
        }
    }

    struct BadUsage: Sendable, CustomTestStringConvertible {
        let arguments: [String]
        let message: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    @Test(arguments: [
        BadUsage(arguments: ["--bogus"], message: "unknown option --bogus"),
        BadUsage(arguments: ["--port"], message: "--port needs a value"),
        BadUsage(arguments: ["--port", "1", "--port", "2"], message: "--port given more than once"),
        BadUsage(arguments: ["stray"], message: "unexpected argument \"stray\""),
        BadUsage(arguments: ["--", "stray"], message: "unexpected argument \"stray\""),
    ])
    func malformedArgumentsAreUsageErrors(_ row: BadUsage) {
        #expect {
            _ = try SampleSettings.parse(row.arguments, environment: [:])
        } throws: { error in
            (error as? UsageError)?.description == row.message
        }
    }

    @Test func commandOptionsRequiredOptionalRepeatedAndPositional() throws {
        let parsed = try SampleCommand.parse([
            "--pack", "level2", "--transaction", "a.jws", "a.bin", "--transaction", "b,c.jws", "--dry-run", "--", "--odd-name",
        ], environment: ["DEPOT_PACK": "ignored", "DEPOT_DATA": "/from/environment"])
        #expect(parsed.pack == "level2")
        #expect(parsed.version == nil)
        #expect(parsed.chunkSize == 1_048_576)
        #expect(parsed.transactions == ["a.jws", "b,c.jws"])
        #expect(parsed.dryRun)
        #expect(parsed.files == ["a.bin", "--odd-name"])
        // A setting taken from the group still reads its environment variable; a command's own option never does.
        #expect(parsed.settings.data == "/from/environment")
        #expect(parsed.injected == "production")
    }

    @Test func commandOptionErrorsAreUsageErrors() {
        #expect { _ = try SampleCommand.parse([], environment: ["DEPOT_PACK": "level2"]) } throws: { error in
            (error as? UsageError)?.description == "--pack is required"
        }
        #expect { _ = try SampleCommand.parse(["--pack", "p", "--version", "0"], environment: [:]) } throws: { error in
            (error as? UsageError)?.description == "--version: \"0\" is not an integer in 1...1000"
        }
        // A setting of the group stays a configuration error.
        #expect { _ = try SampleCommand.parse(["--pack", "p", "--port", "x"], environment: [:]) } throws: { error in
            (error as? ConfigurationError)?.option == "port"
        }
    }

    @Test func aGroupRestrictedToSomeOptionsHidesTheOthers() throws {
        #expect(SampleCommand.declarations.map(\.name) == ["pack", "version", "chunk-size", "transaction", "dry-run", "port", "data"])
        #expect(SampleCommand.positionalName == "FILE...")
        #expect { _ = try SampleCommand.parse(["--pack", "p", "--host", "::1"], environment: [:]) } throws: { error in
            (error as? UsageError)?.description == "unknown option --host"
        }
        // Hidden settings keep their defaults, whatever the environment says.
        let parsed = try SampleCommand.parse(["--pack", "p"], environment: ["DEPOT_HOST": "::1", "DEPOT_PORT": "1"])
        #expect(parsed.settings.host == "127.0.0.1")
        #expect(parsed.settings.port == 1)
    }

    @Test func aCommandWithoutArgumentsRefusesThem() {
        #expect(SampleCopy.positionalName == nil)
        #expect { _ = try SampleCopy.parse(["--from", "a", "--to", "b", "c"], environment: [:]) } throws: { error in
            (error as? UsageError)?.description == "unexpected argument \"c\""
        }
    }
}
