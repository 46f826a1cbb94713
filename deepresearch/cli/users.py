"""`deepresearch users add|remove|list`: the people who may use a server run with
DEEPRESEARCH_AUTH=tokens, in its tokens file (--file, else DEEPRESEARCH_TOKENS_FILE, else
tokens.json in the user's configuration folder).

`add NAME [--admin]` prints the new user's token once, on stdout and nowhere else (only its hash
is kept: a lost token is replaced with `remove` then `add`); `--admin` lets them read every
user's threads. `list` shows names, roles and dates, never a token or a hash."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from deepresearch.cli.common import EXIT_OK, UsageError, _Parser, check_text


def users_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="deepresearch users", description="Manage the API tokens of a server run with DEEPRESEARCH_AUTH=tokens."
    )
    p.add_argument(
        "--file",
        metavar="PATH",
        help="the tokens file (default: DEEPRESEARCH_TOKENS_FILE, else tokens.json in the user configuration folder)",
    )
    sub = p.add_subparsers(dest="action", required=True, parser_class=_Parser)
    add = sub.add_parser("add", help="add a user and print their token (shown once)")
    add.add_argument("name")
    add.add_argument("--admin", action="store_true", help="this user reads and lists every user's threads")
    sub.add_parser("remove", help="remove a user (their token stops working)").add_argument("name")
    sub.add_parser("list", help="list the users").add_argument("--json", action="store_true")
    return p


def cmd_users(argv: list[str]) -> int:
    from deepresearch.auth import tokens

    args = users_parser().parse_args(argv)
    path = Path(args.file).expanduser() if args.file else tokens.default_path()
    try:
        if args.action == "add":
            check_text("the user name", args.name, one_line=True)
            token = tokens.add(path, args.name, admin=args.admin)
            print(token)
            print(
                f"added {args.name}{' (admin)' if args.admin else ''} to {path}: the token above is shown once; "
                "send it as 'Authorization: Bearer TOKEN'",
                file=sys.stderr,
            )
        elif args.action == "remove":
            tokens.remove(path, args.name)
            print(f"removed {args.name} from {path}", file=sys.stderr)
        else:
            rows = [
                {"name": n, "admin": bool(u.get("admin")), "created": u.get("created", "")}
                for n, u in sorted(tokens.load(path).items())
            ]
            if args.json:
                print(json.dumps(rows, indent=2))
            elif not rows:
                print(f"no users in {path}")
            else:
                for r in rows:
                    print(f"{r['name']}\t{'admin' if r['admin'] else 'user'}\t{r['created']}")
    except tokens.TokensFileError as e:
        raise UsageError(str(e)) from None
    return EXIT_OK
