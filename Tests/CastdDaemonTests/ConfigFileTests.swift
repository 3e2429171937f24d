import CastDevices
import CastTestSupport
import CastdAPI
import CastdDaemon
import CastdServer
import Foundation
import Testing

/// castd.toml: every key read, every mistake named with its key and line.
@Suite(.tags(.cpuBound)) struct ConfigFileTests {
    static let complete = """
        # every key castd takes
        socket = "/run/castd/castd.sock"
        state_directory = "/var/lib/castd"
        devices = ["Kitchen=192.168.1.21:8009", "192.168.1.22"]
        discovery = false
        trust_roots = []
        device_auth = "warn"

        [access]
        control_groups = ["4301"]
        read_groups = ["4300"]

        [limits]
        max_frame_bytes = 1048576
        max_connections_per_uid = 16
        max_calls_per_connection = 32
        watcher_queue = 64
        idle_timeout_seconds = 10
        max_mdns_services = 2048
        max_mdns_services_per_host = 8
        frame_timeout_seconds = 20

        [launch]
        app_id = "ABCD1234"
        language = "de-DE"
        android_tv = true
        if_running = "relaunch"
        filter_devices = true

        [http]
        address = "192.168.1.10"
        port = 8095

        [log]
        level = "debug"

        [log.filters]
        "Cast*Session" = "verbose"
        "Discovery*" = "warning"
        RPC = "error"
        """

    @Test func everyKeyIsReadWithItsLine() throws {
        let layer = try ConfigFile.parse(Self.complete, file: "castd.toml")
        #expect(layer[.socket] == .string("/run/castd/castd.sock"))
        #expect(layer[.devices] == .strings(["Kitchen=192.168.1.21:8009", "192.168.1.22"]))
        #expect(layer[.discovery] == .bool(false))
        #expect(layer[.controlGroups] == .strings(["4301"]))
        #expect(layer[.maxFrameBytes] == .integer(1_048_576))
        #expect(layer[.idleTimeoutSeconds] == .integer(10))
        #expect(layer[.maxMDNSServices] == .integer(2048))
        #expect(layer[.maxMDNSServicesPerHost] == .integer(8))
        #expect(layer[.frameTimeoutSeconds] == .integer(20))
        #expect(layer[.logLevel] == .string("debug"))
        #expect(layer[.httpAddress] == .string("192.168.1.10") && layer[.httpPort] == .integer(8095))
        // The file's order, which decides which filter wins.
        #expect(
            layer[.logFilters]
                == .table([("Cast*Session", "verbose"), ("Discovery*", "warning"), ("RPC", "error")]))
        #expect(layer.origins[.socket] == "castd.toml:2")
        #expect(layer.origins[.maxFrameBytes] == "castd.toml:14")
        #expect(Set(layer.values.keys) == Set(ConfigKey.allCases), "the example names every key")
    }

    @Test(arguments: [
        (
            "[limits]\nmax_frame_byte = 10\n", "castd.toml:2: limits.max_frame_byte: unknown key",
            "did you mean max_frame_bytes?"
        ),
        ("sockets = \"/x\"\n", "castd.toml:1: sockets: unknown key", "did you mean socket?"),
        (
            "\n\n[limits]\nwatcher_queue = \"many\"\n", "castd.toml:4: limits.watcher_queue: must be an integer",
            "\"many\""
        ),
        ("[limits]\nwatcher_queue = 1\n", "castd.toml:2: limits.watcher_queue: 1 is out of range", "2 to 1000000"),
        ("discovery = \"yes\"\n", "castd.toml:1: discovery: must be true or false", "a string"),
        ("devices = \"192.168.1.2\"\n", "castd.toml:1: devices: must be an array of strings", ""),
        ("devices = [\"a\", 3]\n", "castd.toml:1: devices: element 2 must be a string", "an integer"),
        ("limits = 3\n", "castd.toml:1: limits: must be a table", ""),
        ("[log.filters]\nRPC = 3\n", "castd.toml:2: log.filters.RPC: must be a string", ""),
        ("[log]\nfilters = { \"Cast*\" = 1 }\n", "castd.toml:2: log.filters.\"Cast*\": must be a string", ""),
        (
            "[access]\ncontrol_groups = [\"a\"]\nrules = 1\n", "castd.toml:3: access.rules: unknown key",
            "control_groups"
        ),
        ("[extras]\nx = 1\n", "castd.toml:1: extras: unknown key", "[limits]"),
        ("socket = \"/x\n", "castd.toml:1: not valid TOML", ""),
        ("a.b.c = 1\n", "castd.toml:1: a: unknown key", ""),
        ("[limits]\nmax_frame_bytes = 1.5\n", "castd.toml:2: '1.5' is not a whole number", "decimal digits only"),
    ])
    func mistakesAreNamedWithKeyAndLine(_ text: String, _ prefix: String, _ detail: String) {
        let error = #expect(throws: ConfigError.self) { try ConfigFile.parse(text, file: "castd.toml") }
        let message = error?.description ?? ""
        #expect(message.hasPrefix(prefix), "\(message)")
        #expect(detail.isEmpty || message.contains(detail), "\(message)")
    }

    @Test func aFileThatCannotBeReadSaysWhy() {
        let error = #expect(throws: ConfigError.self) { try ConfigFile.load(path: "/nonexistent/castd.toml") }
        #expect(error?.description == "/nonexistent/castd.toml: cannot read the file: no such file")
    }

    @Test func flagsOverrideTheFileAndSayWhereValuesCameFrom() throws {
        let file = try ConfigFile.parse("[limits]\nwatcher_queue = 64\nmax_calls_per_connection = 8\n", file: "c.toml")
        var flags = ConfigLayer()
        flags.set(.watcherQueue, .integer(1000), from: "--watcher-queue")
        let merged = file.overridden(by: flags)
        #expect(merged[.watcherQueue] == .integer(1000))
        #expect(merged.origins[.watcherQueue] == "--watcher-queue")
        #expect(merged[.maxCallsPerConnection] == .integer(8))
        #expect(merged.origins[.maxCallsPerConnection] == "c.toml:3")
    }

    @Test func theShippedExampleIsValid() throws {
        let example = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("packaging/castd.toml").path
        let layer = try ConfigFile.load(path: example)
        // Everything in it is commented out: it documents the defaults without setting them.
        #expect(layer.values.isEmpty)
        let text = try String(contentsOfFile: example, encoding: .utf8)
        for key in ConfigKey.allCases {
            #expect(text.contains(key.path.last!), "the example documents \(key.name)")
        }
    }
}

/// Settings resolved from the layers and the mode.
@Suite(.tags(.cpuBound)) struct SettingsTests {
    let systemPaths = DaemonPaths(mode: .system, environment: [:], isRoot: true)

    @Test func defaultsFollowTheMode() throws {
        let user = DaemonPaths(
            mode: .user, environment: ["XDG_RUNTIME_DIR": "/run/user/1000", "HOME": "/home/ann"], isRoot: false)
        let settings = try CastdSettings.resolve(ConfigLayer(), paths: user, configFile: nil)
        #expect(settings.socket == "/run/user/1000/castd/castd.sock")
        #expect(settings.stateDirectory == "/home/ann/.local/state/castd")
        #expect(user.configFile == "/home/ann/.config/castd/castd.toml")
        #expect(settings.access.controlGroups.isEmpty && settings.access.readGroups.isEmpty)
        #expect(settings.maxFrameBytes == 4 << 20 && settings.maxConnectionsPerUID == 256)
        #expect(settings.maxCallsPerConnection == 128 && settings.watcherQueue == 256)
        #expect(settings.idleTimeout == .seconds(30))
        #expect(settings.frameTimeout == .seconds(30))

        #expect(systemPaths.socket == "/run/castd/castd.sock")
        #expect(systemPaths.stateDirectory == "/var/lib/castd")
        #expect(systemPaths.configFile == "/etc/castd/castd.toml")
        #expect(systemPaths.defaultControlGroups == ["castd"])

        let systemd = DaemonPaths(
            mode: .system,
            environment: ["STATE_DIRECTORY": "/var/lib/castd:/var/lib/other", "CONFIGURATION_DIRECTORY": "/etc/castd"])
        #expect(systemd.stateDirectory == "/var/lib/castd")
        #expect(systemd.configFile == "/etc/castd/castd.toml")
        #expect(DaemonMode.detect(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"]) == .user)
        #expect(DaemonMode.detect(environment: [:]) == .system)
    }

    @Test func aUserDaemonWithoutARuntimeDirectoryMustBeGivenASocket() {
        let paths = DaemonPaths(mode: .user, environment: ["HOME": "/home/ann"], isRoot: false)
        let error = #expect(throws: ConfigError.self) {
            try CastdSettings.resolve(ConfigLayer(), paths: paths, configFile: nil)
        }
        #expect(error?.description.contains("XDG_RUNTIME_DIR") == true)
    }

    @Test func valuesAreCheckedWhereTheyCameFrom() throws {
        var layer = try ConfigFile.parse("devices = [\"Kitchen=\"]\n", file: "c.toml")
        var error = #expect(throws: ConfigError.self) {
            try CastdSettings.resolve(layer, paths: systemPaths, configFile: "c.toml")
        }
        #expect(error?.description.hasPrefix("c.toml:1: devices: ") == true, "\(error?.description ?? "")")

        layer = try ConfigFile.parse("device_auth = \"maybe\"\n", file: "c.toml")
        error = #expect(throws: ConfigError.self) {
            try CastdSettings.resolve(layer, paths: systemPaths, configFile: "c.toml")
        }
        #expect(error?.description == "c.toml:1: device_auth: 'maybe' is not a policy; use require or warn")

        layer = ConfigLayer()
        layer.set(.controlGroups, .strings(["no-such-group-here"]), from: "--control-group")
        error = #expect(throws: ConfigError.self) {
            try CastdSettings.resolve(layer, paths: systemPaths, configFile: nil)
        }
        #expect(error?.description == "--control-group: access.control_groups: no group named no-such-group-here")

        layer = try ConfigFile.parse("trust_roots = [\"/nonexistent/root.pem\"]\n", file: "c.toml")
        error = #expect(throws: ConfigError.self) {
            try CastdSettings.resolve(layer, paths: systemPaths, configFile: "c.toml")
        }
        #expect(error?.description.contains("/nonexistent/root.pem") == true)
    }

    @Test func launchDefaultsAreReadAndChecked() throws {
        let settings = try CastdSettings.resolve(
            try ConfigFile.parse(ConfigFileTests.complete, file: "castd.toml"), paths: systemPaths,
            configFile: "castd.toml")
        #expect(settings.launch.appID == "ABCD1234")
        #expect(settings.launch.options.language == "de-DE" && settings.launch.options.androidTv)
        #expect(settings.launch.relaunch && settings.launch.deviceCriterion == "ABCD1234")
        let none = try CastdSettings.resolve(ConfigLayer(), paths: systemPaths, configFile: nil)
        #expect(none.launch == LaunchDefaults())

        for (line, message) in [
            ("[launch]\napp_id = \"not an app\"\n", "c.toml:2: launch.app_id: 'not an app' is not a receiver app id"),
            ("[launch]\nlanguage = \"en US\"\n", "c.toml:2: launch.language: 'en US' is not a language tag"),
            ("[launch]\nif_running = \"stop\"\n", "c.toml:2: launch.if_running: 'stop' is not what to do"),
            ("[launch]\nfilter_devices = true\n", "c.toml:2: launch.filter_devices: lists the devices that can run"),
        ] {
            let error = #expect(throws: ConfigError.self) {
                try CastdSettings.resolve(
                    try ConfigFile.parse(line, file: "c.toml"), paths: systemPaths, configFile: "c.toml")
            }
            #expect(error?.description.hasPrefix(message) == true, "\(error?.description ?? "")")
        }
    }

    @Test func launchDefaultsFillWhatARequestLeavesOut() {
        var options = CastdLaunchOptions()
        options.language = "de-DE"
        options.androidTv = true
        let defaults = LaunchDefaults(appID: "ABCD1234", options: options, relaunch: true)

        // No app: the default app, relaunched, with the default options.
        let plain = defaults.applied(to: SessionRequest())
        #expect(plain.appID == "ABCD1234" && plain.mode == .launch)
        #expect(plain.launch.language == "de-DE" && plain.launch.androidTv)

        // An app of the client's own: joined or launched as asked; its language wins.
        var own = SessionRequest(appID: "CC1AD845", mode: .joinOrLaunch)
        own.launch.language = "fr-FR"
        own.launch.credentials = "token"
        let applied = defaults.applied(to: own)
        #expect(applied.appID == "CC1AD845" && applied.mode == .joinOrLaunch)
        #expect(applied.launch.language == "fr-FR" && applied.launch.androidTv && applied.launch.credentials == "token")

        // No defaults: the request is as sent (an empty app id joins what runs).
        let untouched = LaunchDefaults().applied(to: SessionRequest())
        #expect(untouched.appID.isEmpty && untouched.mode == .joinOrLaunch && untouched.launch == CastdLaunchOptions())
    }

    @Test func groupsByNameOrNumberMakeThePolicyAndTheSocketMode() throws {
        var layer = ConfigLayer()
        layer.set(.controlGroups, .strings(["4301"]), from: "--control-group")
        var settings = try CastdSettings.resolve(layer, paths: systemPaths, configFile: nil)
        #expect(settings.access.controlGroups == [4301])
        #expect(settings.access.socketPermissions.mode == 0o660 && settings.access.socketPermissions.group == 4301)

        layer.set(.readGroups, .strings(["4300"]), from: "--read-group")
        settings = try CastdSettings.resolve(layer, paths: systemPaths, configFile: nil)
        #expect(settings.access.socketPermissions.mode == 0o666 && settings.access.socketPermissions.group == nil)

        layer.set(.controlGroups, .strings(["root"]), from: "--control-group")
        let error = #expect(throws: ConfigError.self) {
            try CastdSettings.resolve(layer, paths: systemPaths, configFile: nil)
        }
        #expect(error?.description.contains("root group") == true)
    }

    /// The system daemon's default group, `castd`, may not exist (castd not installed): a note,
    /// not an error. Tested with a default group no machine has, so that a machine where
    /// install.sh made the castd group tests it too.
    @Test func aDefaultGroupThatDoesNotExistIsANoteNotAnError() throws {
        var paths = systemPaths
        let absent = "castd-absent-\(UInt32.random(in: 0...UInt32.max))"
        #expect(GroupLookup.gid(absent) == nil)
        paths.defaultControlGroups = [absent]
        let settings = try CastdSettings.resolve(ConfigLayer(), paths: paths, configFile: nil)
        #expect(settings.access.controlGroups.isEmpty)
        #expect(settings.notes.contains { $0.contains("group \(absent) does not exist") })
    }
}

/// Who may call, from the kernel's word on who is calling.
@Suite(.tags(.cpuBound)) struct AccessPolicyTests {
    let policy = CastdAccessPolicy(ownerUID: 1000, controlGroups: [4301], readGroups: [4300])

    @Test func ownerAndRootControlGroupsDecideTheRest() {
        #expect(policy.access(for: PeerCredentials(pid: 1, uid: 1000, gid: 1000)) == .control)
        #expect(policy.access(for: PeerCredentials(pid: 1, uid: 0, gid: 0)) == .control)
        #expect(policy.access(for: PeerCredentials(pid: 1, uid: 2000, gid: 2000, groups: [27, 4301])) == .control)
        #expect(policy.access(for: PeerCredentials(pid: 1, uid: 2000, gid: 4301)) == .control, "primary group")
        #expect(policy.access(for: PeerCredentials(pid: 1, uid: 2000, gid: 2000, groups: [4300])) == .read)
        #expect(policy.access(for: PeerCredentials(pid: 1, uid: 2000, gid: 2000, groups: [4300, 4301])) == .control)
        #expect(policy.access(for: PeerCredentials(pid: 1, uid: 2000, gid: 2000, groups: [27])) == .unspecified)
    }

    @Test func readMethodsChangeNothing() {
        let read = CastdMethod.allCases.filter { $0.requiredAccess == .read }.map(\.rawValue)
        #expect(
            Set(read) == [
                "ListDevices", "GetStatus", "GetDevice", "GetAppAvailability", "Watch", "GetLogFilter", "StreamLogs",
                // Asks the device only for what it has (QUEUE_GET_ITEM_IDS, QUEUE_GET_ITEMS).
                "GetQueue",
            ])
    }

    @Test func socketPermissionsFollowThePolicy() {
        #expect(CastdAccessPolicy(ownerUID: 1000).socketPermissions.mode == 0o600)
        let one = CastdAccessPolicy(ownerUID: 1000, controlGroups: [4301], readGroups: [4301])
        #expect(one.socketPermissions.mode == 0o660 && one.socketPermissions.group == 4301)
        #expect(policy.socketPermissions.mode == 0o666)
    }
}

/// CastdConfigFuzzer's findings: inputs that broke toml++'s own precondition (a debug build
/// aborted; a release build has undefined behaviour) while castd read castd.toml with TOMLKit.
/// castd's own parser (ConfigTOML) refuses each with the line. Each is in
/// Fuzz/Corpus/CastdConfigFuzzer (finding-*.toml).
@Suite(.tags(.cpuBound)) struct ConfigFuzzFindingsTests {
    @Test(arguments: [
        "[\n", "[[\n", "[[[\n\"=\n", "[[[a]]]\n", "[ ]\n", "  [\t\n", "x = 1\n[=\n", "\u{FEFF}[\n", "[\u{05A2}",
    ])
    func aTableHeaderWithoutANameIsRefused(_ text: String) {
        let error = #expect(throws: ConfigError.self) { try ConfigFile.parse(text, file: "c.toml") }
        #expect(error?.problem == "not valid TOML: a table header must name its table right after its brackets")
        #expect(
            error?.line
                == text.split(separator: "\n", omittingEmptySubsequences: false).firstIndex {
                    $0.unicodeScalars.contains("[")
                }.map { $0 + 1 })
    }

    @Test func headersThatNameTheirTableStillParse() throws {
        let layer = try ConfigFile.parse(
            "[limits]\nwatcher_queue = 64\n[ log ]\nlevel = \"debug\"\n[\"log\".filters]\n\"Cast*\" = \"verbose\"\n",
            file: "c.toml")
        #expect(layer[.watcherQueue] == .integer(64))
        #expect(layer[.logLevel] == .string("debug"))
    }

    /// toml++ broke its preconditions parsing malformed numbers (`1048----a`); castd's settings
    /// take plain whole numbers, so anything else number-like is refused, with its line.
    @Test(arguments: [
        "a = 1048----a= 1\n", "a = 1.5\n", "a = 1979-05-27\n", "a = 07:32:00\n", "a = 0x1F\n", "a = 1e5\n",
        "x = [1048-]\n", "\"k\" = 'v' # c\nb = 12a\n",
    ])
    func numbersOtherThanWholeNumbersAreRefused(_ text: String) {
        let error = #expect(throws: ConfigError.self) { try ConfigFile.parse(text, file: "c.toml") }
        #expect(error?.problem.contains("is not a whole number") == true, "\(String(describing: error))")
        #expect(error?.line == text.split(separator: "\n").count, "\(String(describing: error))")
    }

    @Test func wholeNumbersStringsAndCommentsWithDigitsStillParse() throws {
        let layer = try ConfigFile.parse(
            "# 2024-01-01: 1.5 x\ndevices = [\"Kitchen=10.0.0.5:8009\", '1979-05-27']\n[limits]\nwatcher_queue = 1_024 # 0x10\nidle_timeout_seconds = +30\n",
            file: "c.toml")
        #expect(layer[.watcherQueue] == .integer(1024))
        #expect(layer[.idleTimeoutSeconds] == .integer(30))
    }

    /// The fifth finding (Fuzz/Corpus/CastdConfigFuzzer/finding-array-then-brace.toml): toml++
    /// asserted in parse_value on a `}` where an array's first value should be.
    @Test func anArrayThenABraceIsRefused() throws {
        for text in ["es =[}", "devices = [}\n", "devices = [\"a\", }]\n", "x = 1\ndevices = [\n}\n"] {
            let error = #expect(throws: ConfigError.self) { try ConfigFile.parse(text, file: "c.toml") }
            #expect(
                error?.problem.hasPrefix("not valid TOML: '}' cannot start a value") == true,
                "\(String(describing: error))")
            #expect(error?.line == text.split(separator: "\n").count, "\(String(describing: error))")
        }
        let finding = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/Corpus/CastdConfigFuzzer/finding-array-then-brace.toml").path
        let error = #expect(throws: ConfigError.self) { try ConfigFile.load(path: finding) }
        #expect(
            error?.line == 1 && error?.problem.contains("'}' cannot start a value") == true,
            "\(String(describing: error))")
    }
}
