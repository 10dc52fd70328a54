"""Write spec/schemas/<name>.schema.json (JSON Schema 2020-12) from each <name>.jtd.json.

Run after editing a JTD schema: python scripts/gen_json_schemas.py
tests/test_schemas.py fails when the committed files differ from what this script writes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from simplex_protocols._schema import jtd_to_json_schema  # noqa: E402


def render(jtd_file: Path) -> str:
    jtd = json.loads(jtd_file.read_text(encoding="utf-8"))
    schema = jtd_to_json_schema(jtd)
    meta = jtd.get("metadata", {})
    if "description" in meta:
        schema = {"$schema": schema.pop("$schema"), "description": meta["description"], **schema}
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    for jtd_file in sorted((ROOT / "spec" / "schemas").glob("*.jtd.json")):
        target = jtd_file.with_name(jtd_file.name.replace(".jtd.json", ".schema.json"))
        target.write_text(render(jtd_file), encoding="utf-8")
        print(f"wrote {target.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
