#!/usr/bin/env python3
"""Generates the SPIR-V grammar tables the reader (jit/src/spirv/spirv_reader.cpp) walks.

Input: SPIRV-Headers' spirv.core.grammar.json and extinst.glsl.std.450.grammar.json.
Output (into --out): spirv_grammar_tables.cpp, defining the arrays declared in
jit/src/spirv/spirv_grammar.h:

  kOperandKinds   every operand kind: its class (id, literal, pair, value/bit enum), and
                  for enums the slice of kEnumerants holding its values.
  kEnumerants     per enum kind, sorted by value (aliases folded): name and the slice of
                  kOperandRefs describing the enumerant's parameters (Decoration
                  SpecId -> LiteralInteger, ExecutionMode LocalSizeId -> 3 x IdRef, ...).
  kOpcodes        sorted by opcode: name, grammar class, whether the instruction has a
                  result type / result id, and the slice of kOperandRefs for the
                  remaining operands (with quantifiers: one, '?', '*').
  kGlslStd450     GLSL.std.450 instruction numbers, names and operand counts.

Nothing here is policy: which capabilities the lowering supports lives in
jit/src/spirv/capabilities.cpp, and the forward-reference rules live in the reader.
"""
import argparse
import json
import os
import sys

LITERAL_CLASSES = {
    "LiteralInteger": "LiteralInteger",
    "LiteralFloat": "LiteralInteger",  # one word in every place the grammar uses it
    "LiteralString": "LiteralString",
    "LiteralContextDependentNumber": "LiteralContextDependentNumber",
    "LiteralExtInstInteger": "LiteralExtInstInteger",
    "LiteralSpecConstantOpInteger": "LiteralSpecConstantOpInteger",
}
ID_KINDS = {"IdResultType": "IdResultType", "IdResult": "IdResult", "IdRef": "IdRef",
            "IdMemorySemantics": "IdRef", "IdScope": "IdRef"}
QUANT = {None: "Quantifier::One", "?": "Quantifier::Optional", "*": "Quantifier::Variadic"}


def cstr(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def parse_value(v):
    return int(v, 0) if isinstance(v, str) else int(v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--core", required=True)
    ap.add_argument("--glsl", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    with open(args.core) as f:
        core = json.load(f)
    with open(args.glsl) as f:
        glsl = json.load(f)

    kinds = core["operand_kinds"]
    kind_index = {k["kind"]: i for i, k in enumerate(kinds)}
    refs = []  # (kind index, quantifier)

    def add_refs(operands):
        first = len(refs)
        for op in operands:
            if op["kind"] not in kind_index:
                sys.exit(f"unknown operand kind {op['kind']}")
            q = op.get("quantifier")
            if q not in QUANT:
                sys.exit(f"unknown quantifier {q}")
            refs.append((kind_index[op["kind"]], QUANT[q]))
        return first, len(refs) - first

    kind_rows = []
    enum_rows = []
    for k in kinds:
        cat = k["category"]
        name = k["kind"]
        first_enum, enum_count, pair = 0, 0, (0, 0)
        if cat == "Id":
            cls = ID_KINDS[name]
        elif cat == "Literal":
            if name not in LITERAL_CLASSES:
                sys.exit(f"unknown literal kind {name}")
            cls = LITERAL_CLASSES[name]
        elif cat == "Composite":
            bases = k["bases"]
            if len(bases) != 2:
                sys.exit(f"composite {name} with {len(bases)} bases")
            cls = "Pair"
            pair = (kind_index[bases[0]], kind_index[bases[1]])
        elif cat in ("ValueEnum", "BitEnum"):
            cls = cat
            by_value = {}
            for e in k["enumerants"]:
                v = parse_value(e["value"])
                if v in by_value:
                    continue  # an alias spelled as its own entry in older grammars
                by_value[v] = e
            first_enum = len(enum_rows)
            for v in sorted(by_value):
                e = by_value[v]
                pf, pc = add_refs(e.get("parameters", []))
                enum_rows.append((v, e["enumerant"], pf, pc))
            enum_count = len(enum_rows) - first_enum
        else:
            sys.exit(f"unknown operand kind category {cat}")
        kind_rows.append((name, cls, first_enum, enum_count, pair))

    classes = sorted({i["class"] for i in core["instructions"]})
    op_rows = {}
    for ins in core["instructions"]:
        opc = ins["opcode"]
        if opc in op_rows:
            continue
        ops = list(ins.get("operands", []))
        has_type = bool(ops) and ops[0]["kind"] == "IdResultType"
        if has_type:
            ops = ops[1:]
        has_result = bool(ops) and ops[0]["kind"] == "IdResult"
        if has_result:
            ops = ops[1:]
        for o in ops:
            if o["kind"] in ("IdResultType", "IdResult"):
                sys.exit(f"{ins['opname']}: result operands not at the front")
        pf, pc = add_refs(ops)
        op_rows[opc] = (ins["opname"], ins["class"], has_type, has_result, pf, pc)

    glsl_rows = []
    for ins in sorted(glsl["instructions"], key=lambda i: i["opcode"]):
        ops = ins.get("operands", [])
        if any(o["kind"] != "IdRef" or o.get("quantifier") for o in ops):
            sys.exit(f"GLSL.std.450 {ins['opname']}: operands other than plain IdRef")
        glsl_rows.append((ins["opcode"], ins["opname"], len(ops)))

    if len(refs) >= 65536 or len(enum_rows) >= 65536:
        sys.exit("table too large for 16-bit indexes")

    out = []
    w = out.append
    w("// Generated by jit/gen/gen_spirv_tables.py from spirv.core.grammar.json "
      f"{core['major_version']}.{core['minor_version']} rev {core['revision']}. Do not edit.")
    w('#include "spirv/spirv_grammar.h"')
    w("")
    w("namespace coopvk::jit::grammar {")
    w("")
    w("const char* const kInstructionClasses[] = {")
    for c in classes:
        w(f"    {cstr(c)},")
    w("};")
    w(f"const size_t kInstructionClassCount = {len(classes)};")
    w("")
    w("const OperandRef kOperandRefs[] = {")
    for kidx, q in refs:
        w(f"    {{{kidx}, {q}}},")
    if not refs:
        w("    {0, Quantifier::One},")
    w("};")
    w("")
    w("const OperandKind kOperandKinds[] = {")
    for name, cls, fe, ec, pair in kind_rows:
        w(f"    {{{cstr(name)}, OperandClass::{cls}, {fe}, {ec}, {pair[0]}, {pair[1]}}},")
    w("};")
    w(f"const size_t kOperandKindCount = {len(kind_rows)};")
    w("")
    w("const Enumerant kEnumerants[] = {")
    for v, name, pf, pc in enum_rows:
        w(f"    {{{v}u, {cstr(name)}, {pf}, {pc}}},")
    w("};")
    w(f"const size_t kEnumerantCount = {len(enum_rows)};")
    w("")
    w("const OpcodeInfo kOpcodes[] = {")
    for opc in sorted(op_rows):
        name, cls, ht, hr, pf, pc = op_rows[opc]
        w(f"    {{{opc}, {cstr(name)}, {classes.index(cls)}, {str(ht).lower()}, "
          f"{str(hr).lower()}, {pf}, {pc}}},")
    w("};")
    w(f"const size_t kOpcodeCount = {len(op_rows)};")
    w("")
    w("const ExtInstInfo kGlslStd450[] = {")
    for num, name, n in glsl_rows:
        w(f"    {{{num}, {cstr(name)}, {n}}},")
    w("};")
    w(f"const size_t kGlslStd450Count = {len(glsl_rows)};")
    w("")
    w("}  // namespace coopvk::jit::grammar")
    text = "\n".join(out) + "\n"

    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "spirv_grammar_tables.cpp")
    old = None
    if os.path.exists(path):
        with open(path) as f:
            old = f.read()
    if old != text:
        with open(path, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
