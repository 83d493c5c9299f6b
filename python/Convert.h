// Shared pieces of the bindings: arrays in (borrowed, no copy), tensors out (numpy views that keep their
// storage alive), probe::Error out (probe.Error subclasses with file/field/api).
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "probe/tensor.h"

namespace probe::python {

/// A numpy array, buffer-protocol object or CPU torch tensor seen as a probe::Tensor. Contiguous data is
/// borrowed in place (the Python object must stay alive while the Tensor is used); other strides are
/// gathered into one contiguous copy (`copied`), since probe::Tensor is dense and row-major.
struct Borrowed {
  Tensor tensor;
  bool copied = false;
};
/// `what` names the argument in errors.
Borrowed borrow(const pybind11::handle& obj, const std::string& what);

/// A numpy array viewing `t`'s elements in place; the array's base owns a copy of the Tensor (its
/// storage, e.g. a file mapping, lives as long as the array). bfloat16 is returned as uint16 bits.
pybind11::object to_numpy(const Tensor& t, bool writeable);

/// Installs the translator of probe::Error into probe._errors' classes.
void register_errors(pybind11::module_& m);
/// Raises the current probe::Error-like exception's Python class (for use in catch blocks).
void register_dump(pybind11::module_& m);
void register_runs(pybind11::module_& m);
void register_online(pybind11::module_& m);

}  // namespace probe::python
