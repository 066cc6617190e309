// The types AppearanceKit's API uses, so that `import AppearanceKit` is all an app needs.
// Only these are re-exported, not their modules: AppearanceCore's `Notification` would clash with Foundation's.
@_exported import struct AppearanceCore.AppearanceState
@_exported import enum AppearanceCore.Mode
@_exported import enum AppearanceCore.Override
@_exported import enum AppearanceCore.Source
@_exported import enum AppearanceCore.SystemScheme
@_exported import struct AppearanceProtocol.RPCError
@_exported import struct AppearanceProtocol.StatusInfo
