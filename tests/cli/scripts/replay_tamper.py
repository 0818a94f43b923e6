"""Makes the damaged goldens the replay CLI tests need from one evidence file:
tampered_prob.json  - runs[0].steps[2].prob multiplied by 0.9 (|Δ log p| = 0.105 at step 2)
other_model.json    - model.files["model.safetensors"].sha256 replaced by 64 zeros
Usage: replay_tamper.py EVIDENCE OUT_DIR"""
import json
import os
import sys

# Far beyond the default tolerance (1e-4): -log(0.9) = 0.105.
PROB_FACTOR = 0.9
TAMPERED_STEP = 2


def main():
    evidence, out_dir = sys.argv[1], sys.argv[2]
    with open(evidence, encoding="utf-8") as f:
        doc = json.load(f)
    os.makedirs(out_dir, exist_ok=True)

    tampered = json.loads(json.dumps(doc))
    tampered["runs"][0]["steps"][TAMPERED_STEP]["prob"] *= PROB_FACTOR
    with open(os.path.join(out_dir, "tampered_prob.json"), "w", encoding="utf-8") as f:
        json.dump(tampered, f, indent=2)

    other = json.loads(json.dumps(doc))
    other["model"]["files"]["model.safetensors"]["sha256"] = "0" * 64
    with open(os.path.join(out_dir, "other_model.json"), "w", encoding="utf-8") as f:
        json.dump(other, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
