"""Provider adapters: each turns the neutral request into one SDK's wire format and
the SDK's answer back into neutral events. SDK types never leave this package."""
