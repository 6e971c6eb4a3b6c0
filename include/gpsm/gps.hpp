#pragma once
// GPS publish-subscribe memory: the whole public API (host; device parts need nvcc).
#include "gpsm/distributed_array.hpp"
#include "gpsm/gps/barrier.hpp"
#include "gpsm/gps/config.hpp"
#include "gpsm/gps/context.hpp"
#include "gpsm/gps/device_fence.hpp"
#include "gpsm/gps/page_math.hpp"
#include "gpsm/gps/settings.hpp"
#include "gpsm/gps/subscription.hpp"
#include "gpsm/gps/sync.hpp"
#include "gpsm/gps/view.hpp"
#include "gpsm/ownership_map.hpp"
