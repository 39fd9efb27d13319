#!/usr/bin/env python3
"""The registry account of every Region, per inference repository, as the SageMaker Python SDK's image
catalog lists them: writes test/fixtures/sdk-image-registries.json, which test/image-registries.test.ts
compares lib/image-registries.ts with, entry by entry.

    python3 scripts/sdk-image-registries.py <sagemaker-python-sdk git dir or checkout> [commit]

The catalog is sagemaker-core/src/sagemaker/core/image_uri_config/<framework>.json (older SDKs:
src/sagemaker/image_uri_config/): per scope (inference, inference_graviton, training, …) and version, a
"repository" and its "registries" (Region → account). Every inference scope of every version is read
(training and eia are other images); a Region listed with two accounts for one repository is an error.
"""
import json
import subprocess
import sys
from pathlib import Path

# The catalog files that list the repositories ContainerImage.fromDlc knows.
FILES = ['pytorch', 'tensorflow', 'mxnet', 'huggingface', 'huggingface-llm', 'djl-lmi', 'sklearn', 'xgboost', 'huggingface-tei', 'huggingface-tei-cpu']
DIRS = ['sagemaker-core/src/sagemaker/core/image_uri_config', 'src/sagemaker/image_uri_config']


def read(source: Path, commit: str | None, name: str) -> tuple[str, dict]:
    for d in DIRS:
        rel = f'{d}/{name}.json'
        if commit or not (source / rel).exists():
            r = subprocess.run(['git', f'--git-dir={source}', 'show', f'{commit or "HEAD"}:{rel}'], capture_output=True, text=True)
            if r.returncode == 0:
                return rel, json.loads(r.stdout)
        else:
            return rel, json.loads((source / rel).read_text())
    sys.exit(f'{name}.json: not in {source} under {" or ".join(DIRS)}')


def walk(node, registries, repository, out, where):
    if isinstance(node, dict):
        if isinstance(node.get('registries'), dict):
            registries = node['registries']
        if isinstance(node.get('repository'), str):
            repository = node['repository']
        if repository and registries and ('registries' in node or 'repository' in node):
            seen = out.setdefault(repository, {})
            for region, account in registries.items():
                if seen.setdefault(region, account) != account:
                    sys.exit(f'{where}: {repository} in {region} is both {seen[region]} and {account}')
        for k, v in node.items():
            if k != 'registries':
                walk(v, registries, repository, out, f'{where}/{k}')


def main():
    source = Path(sys.argv[1])
    commit = sys.argv[2] if len(sys.argv) > 2 else None
    if commit is None and (source / 'HEAD').exists():
        commit = subprocess.run(['git', f'--git-dir={source}', 'rev-parse', 'HEAD'], capture_output=True, text=True, check=True).stdout.strip()
    out: dict = {}
    files = []
    for name in FILES:
        rel, catalog = read(source, commit, name)
        files.append(rel)
        for scope, body in catalog.items():
            if scope.startswith('inference'):
                walk(body, None, None, out, f'{rel}:{scope}')
            elif scope == 'versions':  # a catalog without scopes
                walk(catalog, None, None, out, rel)
    fixture = {
        '_source': f'aws/sagemaker-python-sdk at {commit}: the "registries" of every inference version in {", ".join(files)} (scripts/sdk-image-registries.py)',
        'repositories': {repo: dict(sorted(regions.items())) for repo, regions in sorted(out.items())},
    }
    target = Path(__file__).resolve().parent.parent / 'test' / 'fixtures' / 'sdk-image-registries.json'
    target.write_text(json.dumps(fixture, indent=2) + '\n')
    print(f'{target}: {len(out)} repositories')


if __name__ == '__main__':
    main()
