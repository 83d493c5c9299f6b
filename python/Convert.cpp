#include "Convert.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>
#include <exception>
#include <string_view>
#include <vector>

#include "probe/dtype.h"
#include "probe/error.h"
#include "probe/storage.h"

namespace py = pybind11;

namespace probe::python {
namespace {

// Elements owned by a Python object, borrowed for the length of one call.
class BorrowedStorage final : public Storage {
 public:
  BorrowedStorage(void* data, std::size_t size) : data_(static_cast<std::byte*>(data)), size_(size) {}
  std::byte* data() noexcept override { return data_; }
  std::size_t size() const noexcept override { return size_; }

 private:
  std::byte* data_;
  std::size_t size_;
};

// The buffer protocol's struct format of one element (native byte order), as numpy writes it.
std::optional<DType> dtype_of_format(std::string_view f, std::size_t itemsize) {
  if (!f.empty() && (f[0] == '@' || f[0] == '=' || f[0] == '<')) f.remove_prefix(1);
  if (f == "?") return DType::Bool;
  if (f == "e") return DType::Float16;
  if (f == "f") return DType::Float32;
  if (f == "d") return DType::Float64;
  if (f == "Zf") return DType::Complex64;
  if (f == "Zd") return DType::Complex128;
  if (f.size() != 1) return std::nullopt;
  const bool is_unsigned = f[0] == 'B' || f[0] == 'H' || f[0] == 'I' || f[0] == 'L' || f[0] == 'Q';
  const bool is_integer =
      is_unsigned || f[0] == 'b' || f[0] == 'h' || f[0] == 'i' || f[0] == 'l' || f[0] == 'q';
  if (!is_integer) return std::nullopt;
  switch (itemsize) {
    case 1:
      return is_unsigned ? DType::UInt8 : DType::Int8;
    case 2:
      return is_unsigned ? DType::UInt16 : DType::Int16;
    case 4:
      return is_unsigned ? DType::UInt32 : DType::Int32;
    case 8:
      return is_unsigned ? DType::UInt64 : DType::Int64;
    default:
      return std::nullopt;
  }
}

// A view over `data` with byte strides; contiguous row-major data is borrowed, anything else gathered.
Borrowed view(DType dtype, void* data, const Shape& shape, const std::vector<std::int64_t>& strides,
              const std::string& what) {
  const std::size_t item = itemsize(dtype);
  const std::int64_t n = numel(shape);
  bool contiguous = true;
  std::int64_t expected = static_cast<std::int64_t>(item);
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && strides[d] != expected) contiguous = false;
    expected *= shape[d];
  }
  if (contiguous || n == 0) {
    auto storage = std::make_shared<BorrowedStorage>(data, static_cast<std::size_t>(n) * item);
    return {Tensor::from_storage(dtype, shape, storage), false};
  }
  // Gather element by element in row-major order (strides may be negative or zero).
  Tensor t = Tensor::zeros(dtype, shape);
  std::byte* out = t.mutable_bytes();
  std::vector<std::int64_t> idx(shape.size(), 0);
  const auto* base = static_cast<const std::byte*>(data);
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t off = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) off += idx[d] * strides[d];
    std::memcpy(out + static_cast<std::size_t>(i) * item, base + off, item);
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  (void)what;
  return {t, true};
}

bool is_torch_tensor(const py::handle& obj) {
  const py::handle type = py::type::handle_of(obj);
  const std::string module = py::str(type.attr("__module__"));
  return module.rfind("torch", 0) == 0 && py::hasattr(obj, "data_ptr") && py::hasattr(obj, "stride");
}

}  // namespace

Borrowed borrow(const py::handle& obj, const std::string& what) {
  if (is_torch_tensor(obj)) {
    const std::string device = py::str(obj.attr("device").attr("type"));
    if (device != "cpu")
      throw Error(ErrorKind::InvalidArgument,
                  "a torch tensor on '" + device + "' must be moved to the CPU first", "", what);
    std::string dtype_text = py::str(obj.attr("dtype"));
    const std::optional<DType> dtype = parse_dtype(dtype_text);
    if (!dtype) throw Error(ErrorKind::Unsupported, "dtype " + dtype_text + " is not supported", "", what);
    if (py::cast<bool>(obj.attr("is_conj")()) || py::cast<bool>(obj.attr("is_neg")()))
      throw Error(ErrorKind::Unsupported, "a lazily conjugated or negated tensor: call resolve_conj() first",
                  "", what);
    Shape shape = py::cast<Shape>(py::tuple(obj.attr("shape")));
    std::vector<std::int64_t> strides = py::cast<std::vector<std::int64_t>>(py::tuple(obj.attr("stride")()));
    for (auto& s : strides) s *= static_cast<std::int64_t>(itemsize(*dtype));
    auto* data = reinterpret_cast<void*>(py::cast<std::uintptr_t>(obj.attr("data_ptr")()));
    return view(*dtype, data, shape, strides, what);
  }
  if (!PyObject_CheckBuffer(obj.ptr()))
    throw Error(ErrorKind::InvalidArgument,
                std::string("expected a numpy array, a buffer or a torch tensor, got ") +
                    std::string(py::str(py::type::handle_of(obj).attr("__name__"))),
                "", what);
  const py::buffer_info info = py::reinterpret_borrow<py::buffer>(obj).request();
  const std::optional<DType> dtype = dtype_of_format(info.format, static_cast<std::size_t>(info.itemsize));
  if (!dtype)
    throw Error(ErrorKind::Unsupported, "buffer format '" + info.format + "' is not supported", "", what);
  return view(*dtype, info.ptr, Shape(info.shape.begin(), info.shape.end()),
              std::vector<std::int64_t>(info.strides.begin(), info.strides.end()), what);
}

py::object to_numpy(const Tensor& t, bool writeable) {
  py::dtype dtype;
  switch (t.dtype()) {
    case DType::BFloat16:
      dtype = py::dtype("uint16");
      break;
    default:
      dtype = py::dtype(std::string(numpy_name(t.dtype())));
  }
  auto* owner = new Tensor(t);
  py::capsule base(owner, [](void* p) { delete static_cast<Tensor*>(p); });
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  py::array a(dtype, shape, {}, t.bytes(), base);
  if (!writeable) a.attr("setflags")(py::arg("write") = false);
  return a;
}

void register_errors(py::module_& m) {
  (void)m;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      const py::object errors = py::module_::import("probe._errors");
      const py::object cls = errors.attr("class_for")(std::string(to_string(e.kind())));
      const py::object exc = cls(e.what(), py::arg("message") = e.message(), py::arg("file") = e.file(),
                                 py::arg("field") = e.field(), py::arg("api") = e.api(),
                                 py::arg("exit_code") = exit_code(e.kind()));
      PyErr_SetObject(cls.ptr(), exc.ptr());
    }
  });
}

}  // namespace probe::python
