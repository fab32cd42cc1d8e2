#include "engine/greenlets.hpp"

#include <frameobject.h>

namespace dpdb::engine {

PyObject* suspended_greenlet_frames() {
    PyObject* found = PyList_New(0);
    PyObject* name = PyUnicode_FromString("greenlet");
    PyObject* module = found && name ? PyImport_GetModule(name) : nullptr;
    Py_XDECREF(name);
    if (!module) {
        if (!PyErr_Occurred()) return found;  // not imported: no greenlet
        Py_XDECREF(found);
        return nullptr;
    }
    PyObject* type = PyObject_GetAttrString(module, "greenlet");
    Py_DECREF(module);
    PyObject* gc = type && PyType_Check(type) ? PyImport_ImportModule("gc") : nullptr;
    PyObject* objects = gc ? PyObject_CallMethod(gc, "get_objects", nullptr) : nullptr;
    Py_XDECREF(gc);
    int rc = objects && PyList_Check(objects) ? 0 : -1;
    if (rc < 0 && !PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "greenlet.greenlet?");
    for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(objects); ++i) {
        PyObject* object = PyList_GET_ITEM(objects, i);
        if (!PyObject_TypeCheck(object, reinterpret_cast<PyTypeObject*>(type))) continue;
        PyObject* frame = PyObject_GetAttrString(object, "gr_frame");  // greenlet's C getter
        if (!frame || (PyFrame_Check(frame) && PyList_Append(found, frame) < 0)) rc = -1;
        Py_XDECREF(frame);
    }
    Py_XDECREF(objects);
    Py_XDECREF(type);
    if (rc < 0) Py_CLEAR(found);
    return found;
}

}  // namespace dpdb::engine
