#!/usr/bin/env python3
"""Generates coopvk's Vulkan tables from the registry (vk.xml).

Outputs (into --out):
  vk_entrypoints.h / .cpp   every command of core 1.0-1.3 and of icd/extensions.txt:
                            a weak declaration of coopvk_<Name>, a loud stub used when no
                            implementation is linked, and a sorted name -> pointer table.
  vk_extensions.h / .cpp    the extension list with spec versions and scope.
  vk_core_command_names.inc, vk_extension_device_command_names.inc
                            name lists for tests (core commands; extension device commands).
  vk_structs.h / .cpp       sType names and the VkBool32 members of every feature struct
                            (structextends VkPhysicalDeviceFeatures2), so that feature
                            queries and device-creation checks are one generic loop.

Only the command set and the extension list are policy (icd/extensions.txt); everything
else is read from vk.xml so new headers never need hand edits.
"""
import argparse
import os
import re
import sys
import xml.etree.ElementTree as ET

CORE_VERSIONS = ["1.0", "1.1", "1.2", "1.3"]


def api_ok(el):
    api = el.get("api")
    return api is None or "vulkan" in api.split(",")


def read_extension_list(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            name, state = line.split()
            if state not in ("advertised", "hidden"):
                sys.exit(f"{path}: bad state '{state}' for {name}")
            out.append((name, state))
    return out


def eval_depends(expr, have):
    """vk.xml dependency expression: ',' is or, '+' is and, parentheses group."""
    if not expr:
        return True
    tokens = re.findall(r"[A-Za-z0-9_:]+|[(),+]", expr)
    pos = 0

    def parse_or():
        nonlocal pos
        v = parse_and()
        while pos < len(tokens) and tokens[pos] == ",":
            pos += 1
            v = parse_and() or v
        return v

    def parse_and():
        nonlocal pos
        v = parse_atom()
        while pos < len(tokens) and tokens[pos] == "+":
            pos += 1
            v = parse_atom() and v
        return v

    def parse_atom():
        nonlocal pos
        t = tokens[pos]
        pos += 1
        if t == "(":
            v = parse_or()
            pos += 1  # ')'
            return v
        return t.split("::")[0] in have

    return parse_or()


class Registry:
    def __init__(self, xml_path):
        self.root = ET.parse(xml_path).getroot()
        self.commands = {}  # name -> (ret, [param decl], [param names], [param types])
        self.aliases = {}   # alias name -> target name
        for cmd in self.root.find("commands"):
            if not api_ok(cmd):
                continue
            if cmd.get("alias"):
                self.aliases[cmd.get("name")] = cmd.get("alias")
                continue
            proto = cmd.find("proto")
            name = proto.find("name").text
            ret = "".join(proto.itertext())[: -len(name)].strip()
            params, names, types = [], [], []
            for p in cmd.findall("param"):
                if not api_ok(p):
                    continue
                params.append(" ".join("".join(p.itertext()).split()))
                names.append(p.find("name").text)
                types.append(p.find("type").text)
            self.commands[name] = (ret, params, names, types)
        self.structs = {}
        for t in self.root.find("types"):
            if t.get("category") == "struct" and api_ok(t):
                if t.get("alias"):
                    continue
                self.structs[t.get("name")] = t

    def resolve(self, name):
        while name in self.aliases:
            name = self.aliases[name]
        return name


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--xml", required=True)
    ap.add_argument("--extensions", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    reg = Registry(args.xml)
    ext_list = read_extension_list(args.extensions)
    ext_names = [n for n, _ in ext_list]
    have = {f"VK_VERSION_{v.replace('.', '_')}" for v in CORE_VERSIONS}
    have |= {f"VK_{k}_VERSION_{v.replace('.', '_')}" for k in ("BASE", "COMPUTE", "GRAPHICS")
             for v in CORE_VERSIONS}
    have |= set(ext_names)
    # Extensions promoted to a core version we expose count as present for dependencies.
    ext_elems = {e.get("name"): e for e in reg.root.find("extensions")}
    for name, e in ext_elems.items():
        promoted = e.get("promotedto") or ""
        if promoted in have:
            have.add(name)

    # command name -> requirement ("core", version) or ("ext", index)
    cmd_req = {}
    struct_scope = set()
    for feat in reg.root.findall("feature"):
        if not api_ok(feat) or feat.get("number") not in CORE_VERSIONS:
            continue
        ver = feat.get("number")
        for req in feat.findall("require"):
            for c in req.findall("command"):
                cmd_req.setdefault(c.get("name"), ("core", ver))
            for t in req.findall("type"):
                struct_scope.add(t.get("name"))
    ext_info = []
    for idx, (name, state) in enumerate(ext_list):
        e = ext_elems.get(name)
        if e is None:
            sys.exit(f"extension {name} is not in vk.xml")
        spec_version = None
        for req in e.findall("require"):
            for en in req.findall("enum"):
                if en.get("name", "").endswith("_SPEC_VERSION"):
                    spec_version = en.get("value")
            if not api_ok(req) or not eval_depends(req.get("depends"), have):
                continue
            for c in req.findall("command"):
                cmd_req.setdefault(c.get("name"), ("ext", idx))
            for t in req.findall("type"):
                struct_scope.add(t.get("name"))
        ext_info.append((name, e.get("type"), spec_version, state))

    entries = []  # (name, impl name, kind, requirement)
    for name, req in cmd_req.items():
        target = reg.resolve(name)
        if target not in reg.commands:
            continue
        ret, params, pnames, ptypes = reg.commands[target]
        first = ptypes[0] if ptypes else ""
        if name in ("vkCreateInstance", "vkEnumerateInstanceVersion",
                    "vkEnumerateInstanceExtensionProperties",
                    "vkEnumerateInstanceLayerProperties"):
            kind = "Global"
        elif first == "VkInstance":
            kind = "Instance"
        elif first == "VkPhysicalDevice":
            kind = "PhysicalDevice"
        elif first in ("VkDevice", "VkQueue", "VkCommandBuffer"):
            kind = "Device"
        else:
            kind = "Global"
        entries.append((name, target, kind, req))
    entries.sort()
    impls = sorted({e[1] for e in entries})

    os.makedirs(args.out, exist_ok=True)
    write_entrypoints(args.out, reg, entries, impls)
    # For tests: every device-level command that only an extension provides, with that
    # extension and whether it is advertised, so a test can prove vkGetDeviceProcAddr gives
    # it exactly when the device enabled the extension (through the loader too).
    write(args.out, "vk_extension_device_command_names.inc",
          [f'{{"{n}", "{ext_list[r[1]][0]}", {str(ext_list[r[1]][1] == "advertised").lower()}}},'
           for n, _, k, r in entries if r[0] == "ext" and k == "Device"])
    write_extensions(args.out, ext_info)
    write_structs(args.out, reg, struct_scope)


def short(name):
    return name[2:]  # vkFoo -> Foo


def write_entrypoints(out, reg, entries, impls):
    h = [
        "// Generated by icd/gen/gen_vk_tables.py from vk.xml. Do not edit.",
        "#pragma once",
        "#include <vulkan/vulkan.h>",
        "#include <cstdint>",
        "",
        "// Every entry point coopvk may expose. An implementation defines coopvk_<Name>;",
        "// one left undefined resolves (weakly) to null and the table then points at a stub",
        "// that logs the call and returns an error, so nothing silently does nothing.",
    ]
    for impl in impls:
        ret, params, _, _ = reg.commands[impl]
        h.append(f"__attribute__((weak)) VKAPI_ATTR {ret} VKAPI_CALL coopvk_{short(impl)}("
                 f"{', '.join(params) or 'void'});")
    h += [
        "",
        "namespace coopvk {",
        "enum class EntryKind : uint8_t { Global, Instance, PhysicalDevice, Device };",
        "struct EntryPoint {",
        "  const char* name;",
        "  PFN_vkVoidFunction fn;  // the implementation, or the stub when unimplemented",
        "  EntryKind kind;",
        "  bool implemented;",
        "  uint32_t core_version;  // VK_API_VERSION_1_x when core, else 0",
        "  int16_t extension;      // index into extension_table() when from an extension, else -1",
        "};",
        "// Sorted by name; nullptr when the name is unknown.",
        "const EntryPoint* find_entry_point(const char* name);",
        "const EntryPoint* entry_point_table(uint32_t* count);",
        "// Called by the stub of a vkCmd* that has no implementation: the command buffer",
        "// records the failure and vkEndCommandBuffer reports it.",
        "void record_unsupported_command(VkCommandBuffer cb, const char* name);",
        "void log_unsupported_entry(const char* name);",
        "}  // namespace coopvk",
    ]
    c = [
        "// Generated by icd/gen/gen_vk_tables.py from vk.xml. Do not edit.",
        '#include "vk_entrypoints.h"',
        "#include <cstring>",
        "",
        "namespace {",
    ]
    for impl in impls:
        ret, params, pnames, ptypes = reg.commands[impl]
        c.append(f"VKAPI_ATTR {ret} VKAPI_CALL stub_{short(impl)}({', '.join(params) or 'void'}) {{")
        if impl.startswith("vkCmd") and ptypes and ptypes[0] == "VkCommandBuffer":
            c.append(f'  coopvk::record_unsupported_command({pnames[0]}, "{impl}");')
        else:
            c.append(f'  coopvk::log_unsupported_entry("{impl}");')
        if ret == "VkResult":
            c.append("  return VK_ERROR_FEATURE_NOT_PRESENT;")
        elif ret != "void":
            c.append(f"  return {ret}{{}};")
        c.append("}")
    c.append("")
    c.append("const coopvk::EntryPoint kTable[] = {")
    for name, impl, kind, req in entries:
        core = f"VK_API_VERSION_{req[1].replace('.', '_')}" if req[0] == "core" else "0"
        ext = str(req[1]) if req[0] == "ext" else "-1"
        s = short(impl)
        c.append(
            f'  {{"{name}", coopvk_{s} ? reinterpret_cast<PFN_vkVoidFunction>(coopvk_{s}) '
            f": reinterpret_cast<PFN_vkVoidFunction>(stub_{s}), coopvk::EntryKind::{kind}, "
            f"coopvk_{s} != nullptr, {core}, {ext}}},")
    c += [
        "};",
        "}  // namespace",
        "",
        "namespace coopvk {",
        "const EntryPoint* find_entry_point(const char* name) {",
        "  if (!name) return nullptr;",
        "  size_t lo = 0, hi = sizeof(kTable) / sizeof(kTable[0]);",
        "  while (lo < hi) {",
        "    size_t mid = (lo + hi) / 2;",
        "    int r = std::strcmp(kTable[mid].name, name);",
        "    if (r == 0) return &kTable[mid];",
        "    if (r < 0) lo = mid + 1; else hi = mid;",
        "  }",
        "  return nullptr;",
        "}",
        "const EntryPoint* entry_point_table(uint32_t* count) {",
        "  *count = sizeof(kTable) / sizeof(kTable[0]);",
        "  return kTable;",
        "}",
        "}  // namespace coopvk",
    ]
    write(out, "vk_entrypoints.h", h)
    write(out, "vk_entrypoints.cpp", c)
    # For tests: every core command name with its kind, so a test can prove each one
    # resolves to something.
    names = [f'{{"{n}", {str(k == "Device").lower()}}},' for n, _, k, r in entries if r[0] == "core"]
    write(out, "vk_core_command_names.inc", names)


def write_extensions(out, ext_info):
    h = [
        "// Generated by icd/gen/gen_vk_tables.py from vk.xml and icd/extensions.txt.",
        "#pragma once",
        "#include <vulkan/vulkan.h>",
        "#include <cstdint>",
        "namespace coopvk {",
        "struct ExtensionInfo {",
        "  const char* name;",
        "  uint32_t spec_version;",
        "  bool device;      // device extension (else instance)",
        "  bool advertised;  // reported and enableable (else hidden: commands only)",
        "};",
        "const ExtensionInfo* extension_table(uint32_t* count);",
        "// Index into extension_table(), or -1.",
        "int find_extension(const char* name);",
        "}  // namespace coopvk",
    ]
    c = [
        "// Generated by icd/gen/gen_vk_tables.py. Do not edit.",
        '#include "vk_extensions.h"',
        "#include <cstring>",
        "namespace {",
        "const coopvk::ExtensionInfo kExtensions[] = {",
    ]
    for name, typ, ver, state in ext_info:
        c.append(f'  {{"{name}", {ver}, {str(typ == "device").lower()}, '
                 f'{str(state == "advertised").lower()}}},')
    c += [
        "};",
        "}  // namespace",
        "namespace coopvk {",
        "const ExtensionInfo* extension_table(uint32_t* count) {",
        "  *count = sizeof(kExtensions) / sizeof(kExtensions[0]);",
        "  return kExtensions;",
        "}",
        "int find_extension(const char* name) {",
        "  for (size_t i = 0; i < sizeof(kExtensions) / sizeof(kExtensions[0]); ++i)",
        "    if (std::strcmp(kExtensions[i].name, name) == 0) return static_cast<int>(i);",
        "  return -1;",
        "}",
        "}  // namespace coopvk",
    ]
    write(out, "vk_extensions.h", h)
    write(out, "vk_extensions.cpp", c)


def write_structs(out, reg, scope):
    stypes = []    # (struct, VK_STRUCTURE_TYPE_*)
    features = []  # (struct, stype, [bool members])
    for name in sorted(scope):
        t = reg.structs.get(name)
        if t is None:
            continue
        stype = None
        bools = []
        for m in t.findall("member"):
            if not api_ok(m):
                continue
            mname = m.find("name").text
            mtype = m.find("type").text
            if mname == "sType" and m.get("values"):
                stype = m.get("values")
            if mtype == "VkBool32" and "[" not in "".join(m.itertext()):
                bools.append(mname)
        if stype:
            stypes.append((name, stype))
        extends = (t.get("structextends") or "").split(",")
        if "VkPhysicalDeviceFeatures2" in extends and stype:
            features.append((name, stype, bools))
    # VkPhysicalDeviceFeatures (no sType) is handled through VkPhysicalDeviceFeatures2.
    core_bools = [m.find("name").text for m in reg.structs["VkPhysicalDeviceFeatures"].findall("member")]

    h = [
        "// Generated by icd/gen/gen_vk_tables.py from vk.xml. Do not edit.",
        "#pragma once",
        "#include <vulkan/vulkan.h>",
        "#include <cstddef>",
        "#include <cstdint>",
        "namespace coopvk {",
        "// Name of a structure type coopvk knows (core 1.0-1.3 and its extensions), else null.",
        "const char* structure_type_name(VkStructureType s);",
        "// sizeof of that structure, else 0.",
        "size_t structure_type_size(VkStructureType s);",
        "struct BoolMember { const char* name; uint32_t offset; };",
        "struct FeatureStruct {",
        "  VkStructureType stype;  // VK_STRUCTURE_TYPE_MAX_ENUM for VkPhysicalDeviceFeatures",
        "  const char* name;",
        "  uint32_t size;",
        "  const BoolMember* members;",
        "  uint32_t member_count;",
        "};",
        "// The VkPhysicalDeviceFeatures struct itself (no sType).",
        "const FeatureStruct& core_feature_struct();",
        "// A feature struct (extends VkPhysicalDeviceFeatures2) by sType, else null.",
        "const FeatureStruct* find_feature_struct(VkStructureType s);",
        "const FeatureStruct* feature_struct_table(uint32_t* count);",
        "}  // namespace coopvk",
    ]
    c = [
        "// Generated by icd/gen/gen_vk_tables.py. Do not edit.",
        '#include "vk_structs.h"',
        "namespace {",
    ]
    def members_array(var, struct, bools):
        c.append(f"const coopvk::BoolMember {var}[] = {{")
        for b in bools:
            c.append(f'  {{"{b}", static_cast<uint32_t>(offsetof({struct}, {b}))}},')
        c.append("};")
    members_array("kCoreMembers", "VkPhysicalDeviceFeatures", core_bools)
    for i, (name, stype, bools) in enumerate(features):
        if bools:
            members_array(f"kMembers{i}", name, bools)
    c.append("const coopvk::FeatureStruct kCore = {VK_STRUCTURE_TYPE_MAX_ENUM, "
             f'"VkPhysicalDeviceFeatures", sizeof(VkPhysicalDeviceFeatures), kCoreMembers, '
             f"{len(core_bools)}}};")
    c.append("const coopvk::FeatureStruct kFeatures[] = {")
    for i, (name, stype, bools) in enumerate(features):
        arr = f"kMembers{i}" if bools else "nullptr"
        c.append(f'  {{{stype}, "{name}", sizeof({name}), {arr}, {len(bools)}}},')
    # One switch per query over the distinct sTypes (aliases share a value).
    unique = list({stype: name for name, stype in reversed(stypes)}.items())[::-1]

    def switch(fn_sig, case_fmt, default):
        c.append(fn_sig + " {")
        c.append("  switch (s) {")
        for stype, name in unique:
            c.append(f"    case {stype}: return {case_fmt.format(name=name)};")
        c.extend([f"    default: return {default};", "  }", "}"])

    c += ["};", "}  // namespace", "namespace coopvk {"]
    switch("const char* structure_type_name(VkStructureType s)", '"{name}"', "nullptr")
    switch("size_t structure_type_size(VkStructureType s)", "sizeof({name})", "0")
    c += [
          "const FeatureStruct& core_feature_struct() { return kCore; }",
          "const FeatureStruct* find_feature_struct(VkStructureType s) {",
          "  for (const auto& f : kFeatures) if (f.stype == s) return &f;",
          "  return nullptr;",
          "}",
          "const FeatureStruct* feature_struct_table(uint32_t* count) {",
          "  *count = sizeof(kFeatures) / sizeof(kFeatures[0]);",
          "  return kFeatures;",
          "}",
          "}  // namespace coopvk"]
    write(out, "vk_structs.h", h)
    write(out, "vk_structs.cpp", c)


def write(out, name, lines):
    path = os.path.join(out, name)
    text = "\n".join(lines) + "\n"
    if os.path.exists(path) and open(path).read() == text:
        return  # keep timestamps so ninja does not rebuild
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
