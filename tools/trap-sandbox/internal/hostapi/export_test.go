package hostapi

// SetTestHookAwaitingCall sets testHookAwaitingCall until the test ends (cleanup).
func SetTestHookAwaitingCall(hook func(traposID, name string)) (cleanup func()) {
	testHookAwaitingCall = hook
	return func() { testHookAwaitingCall = nil }
}
