// Device facts by name, for what runs without the device: the host-only tests of GPU paths and `skinnygemm
// heuristic --device h200` (the heuristic's picks for that GPU on a machine without one). Selection itself reads
// its device (skinnygemm/device.h), never these.
#pragma once

#include <string>

#include "skinnygemm/device.h"

namespace skinnygemm::tune {

// The named device's facts as its runtime reports them (cudaDeviceProp); an Error naming `name` and the presets
// there are when there is no such preset.
DeviceInfo device_preset(const std::string& name);

// The preset names, comma separated ("h200").
std::string device_preset_names();

}  // namespace skinnygemm::tune
