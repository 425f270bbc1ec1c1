// Everything public.
#pragma once

#include "pixflow/border.hpp"
#include "pixflow/device.hpp"
#include "pixflow/error.hpp"
#include "pixflow/format.hpp"
#include "pixflow/image.hpp"
#include "pixflow/io.hpp"
#include "pixflow/ops.hpp"
#include "pixflow/pipeline.hpp"
