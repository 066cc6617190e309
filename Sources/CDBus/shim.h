#ifndef APPEARANCED_CDBUS_SHIM_H
#define APPEARANCED_CDBUS_SHIM_H
#include <dbus/dbus.h>
#endif
