// The bindings' keyword arguments and result dicts: each binding lists its keywords once, in one table of
// (name, where the value goes), instead of a typed parameter list, a block copying each parameter into the
// options struct and a py::arg list repeating the names and the defaults. A keyword not given leaves the
// options struct's own default, which is therefore the function's default. Likewise a result struct becomes a
// dict from one table of (key, member).
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>
#include <initializer_list>
#include <string>
#include <type_traits>

namespace probe::python {

namespace keyword_detail {
// The value type T of a setter `void (Options&, T)` (a lambda that is not generic); no `type` for anything
// else, so that a member pointer picks the other constructor.
template <class M>
struct call_value {};
template <class C, class O, class T>
struct call_value<void (C::*)(O&, T) const> {
  using type = std::decay_t<T>;
};
template <class F, class = void>
struct setter_value {};
template <class F>
struct setter_value<F, std::void_t<decltype(&F::operator())>> : call_value<decltype(&F::operator())> {};
// Python's name of the type a keyword takes ("int", "str", "Optional[str]", "List[str]"), for TypeError.
template <class T>
const char* python_type_name() {
  return pybind11::detail::make_caster<T>::name.text;
}
}  // namespace keyword_detail

/// Whether a keyword must be given.
enum class KeywordUse { Optional, Required };

/// One keyword of a binding taking `Options`: its name, the Python type it takes and what it sets.
template <class Options>
struct Keyword {
  /// The value, cast to the member's type, goes into `member`.
  template <class T>
  Keyword(const char* keyword, T Options::*member, KeywordUse use = KeywordUse::Optional)
      : name(keyword),
        type(keyword_detail::python_type_name<T>()),
        set([member](Options& o, const pybind11::handle& v) { o.*member = pybind11::cast<T>(v); }),
        required(use == KeywordUse::Required) {}
  /// The value, cast to the setter's parameter type, is handed to `setter(options, value)` (a parse into an
  /// enum, a file name that also turns a flag on, a value kept outside the options struct).
  template <class F, class T = typename keyword_detail::setter_value<F>::type>
  Keyword(const char* keyword, F setter, KeywordUse use = KeywordUse::Optional)
      : name(keyword),
        type(keyword_detail::python_type_name<T>()),
        set([setter](Options& o, const pybind11::handle& v) { setter(o, pybind11::cast<T>(v)); }),
        required(use == KeywordUse::Required) {}

  const char* name;
  const char* type;
  std::function<void(Options&, const pybind11::handle&)> set;
  bool required;
};

/// Applies the keyword arguments `given` of `function` onto `options`, in the table's order. An unknown
/// keyword, a missing required one or a value of the wrong type raises TypeError naming the function and
/// the keyword, as Python does for its own functions; a setter's probe::Error propagates.
template <class Options>
void apply_keywords(const char* function, const pybind11::kwargs& given, Options& options,
                    std::type_identity_t<std::initializer_list<Keyword<Options>>> table) {
  namespace py = pybind11;
  for (const auto& item : given) {
    const std::string name = py::str(item.first);
    bool known = false;
    for (const Keyword<Options>& k : table) known = known || name == k.name;
    if (!known)
      throw py::type_error(std::string(function) + "() got an unexpected keyword argument '" + name + "'");
  }
  for (const Keyword<Options>& k : table) {
    if (!given.contains(k.name)) {
      if (k.required)
        throw py::type_error(std::string(function) + "() missing required keyword argument '" + k.name + "'");
      continue;
    }
    const py::object value = given[k.name];
    try {
      k.set(options, value);
    } catch (const py::cast_error&) {
      // A value of the right Python type that does not fit (a negative count) is named by its value.
      const std::string given_type = py::str(py::type::handle_of(value).attr("__name__"));
      const std::string where = std::string(function) + "(): keyword '" + k.name + "' ";
      if (given_type == k.type)
        throw py::type_error(where + "is out of range: " + std::string(py::repr(value)));
      throw py::type_error(where + "must be " + k.type + ", not " + given_type);
    }
  }
}

/// One entry of the dict a result struct `S` becomes: its key and the member (or the function of the struct)
/// giving its value.
template <class S>
struct Field {
  template <class G>
  Field(const char* field_key, G getter)
      : key(field_key), get([getter](const S& s) { return pybind11::cast(std::invoke(getter, s)); }) {}

  const char* key;
  std::function<pybind11::object(const S&)> get;
};

/// {key: value} for each of `fields`, in order.
template <class S>
pybind11::dict fields_dict(const S& s, std::type_identity_t<std::initializer_list<Field<S>>> fields) {
  pybind11::dict d;
  for (const Field<S>& f : fields) d[f.key] = f.get(s);
  return d;
}

}  // namespace probe::python
