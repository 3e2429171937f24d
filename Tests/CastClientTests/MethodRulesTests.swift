import CastdAPI
import SwiftProtobuf
import Testing

/// `CastdValidation.check(_:for:)` is the one table of which rule applies to which method: castd's
/// router applies it to every call, CastClient to every call before sending.
@Suite struct MethodRulesTests {
    @Test(arguments: CastdMethod.allCases)
    func eachMethodTakesItsOwnRequestType(_ method: CastdMethod) {
        // An empty request of the method's type gets past the type check; only a rule of the
        // method can refuse it (GetAppAvailability, for one, needs an app id).
        do {
            try CastdValidation.check(method.requestType.init(), for: method)
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(!error.message.contains(" takes a "), "\(method): \(error.message)")
        }
    }

    @Test func aRequestOfAnotherTypeIsRefusedNamingTheRightOne() {
        #expect {
            try CastdValidation.check(Castd_V1_MediaRequest(), for: .seek)
        } throws: { error in
            let error = error as? CastdError
            return error?.code == .invalidArgument && error?.message.contains("castd.v1.SeekRequest") == true
        }
    }

    @Test func theSameRequestTypeMeetsEachMethodsOwnRule() throws {
        var steps = Castd_V1_SetVolumeRequest()
        steps.steps = 1
        try CastdValidation.check(steps, for: .setVolume)  // the device's volume moves in steps
        #expect(throws: CastdError.self) { try CastdValidation.check(steps, for: .setStreamVolume) }
        #expect(throws: CastdError.self) { try CastdMethods.setStreamVolume.validate(steps) }
    }
}
