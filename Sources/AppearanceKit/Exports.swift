// The types AppearanceKit's API uses, so that `import AppearanceKit` is all an app needs.
// Only these are re-exported, not their modules: AppearanceCore's `Notification` would clash with Foundation's.
@_exported import struct AppearanceCore.AppearanceState
@_exported import enum AppearanceCore.Mode
@_exported import enum AppearanceCore.Override
@_exported import enum AppearanceCore.Source
@_exported import enum AppearanceCore.SystemScheme
@_exported import struct AppearanceProtocol.RPCError
@_exported import struct AppearanceProtocol.StatusInfo
@_exported import struct AppearanceCore.Traits
@_exported import enum AppearanceCore.Contrast
@_exported import struct AppearanceCore.Color
@_exported import struct AppearanceCore.ResolvedPalette
@_exported import struct AppearanceCore.PaletteToken
@_exported import enum AppearanceCore.PaletteValue
@_exported import struct AppearanceCore.Variant
@_exported import struct AppearanceProtocol.Subscription
@_exported import struct AppearanceCore.TemporaryOverride
@_exported import enum AppearanceProtocol.Lifetime
@_exported import struct AppearanceProtocol.LogEntry
@_exported import struct AppearanceProtocol.IntegrationInfo
@_exported import struct AppearanceProtocol.ReloadReply
