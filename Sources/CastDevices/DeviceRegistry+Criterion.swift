/// castd's discovery criterion (castd.toml's `launch.filter_devices`): only the devices that can
/// run the default app count as available in castd's cast state, as the sender SDK offers only
/// the devices that can run its app. castd asks each device as it is listed (GET_APP_AVAILABILITY;
/// links opened for it a few at a time, as for read calls), and again when a link comes up if it
/// has no answer yet. Every answer about the app, whoever asked, is recorded in the state store
/// (`ReceiverController.availability(of:)`).
extension DeviceRegistry {
    /// Asks device `id` about the criterion's app in the background, unless castd has its answer
    /// or is asking already.
    func checkCriterionSoon(of id: String) {
        guard let app = launchDefaults.deviceCriterion, store.criterionAnswer(deviceID: id) == nil,
            controllers[id] != nil, criterionChecks.insert(id).inserted
        else { return }
        workContinuation.yield { await self.checkCriterion(of: id, app: app) }
    }

    private func checkCriterion(of id: String, app: String) async {
        defer { criterionChecks.remove(id) }
        guard let controller = controllers[id] else { return }
        do {
            _ = try await controller.appAvailability([app], openingWithin: readCallLinks)
        } catch {
            logger.debug(
                "could not ask the device whether it runs the default app",
                metadata: ["device.id": "\(id)", "app": "\(app)", "error": "\(error)"])
        }
    }
}
