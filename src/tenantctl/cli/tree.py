"""`describe`'s tree as rich draws it: the one place the day-two tree meets the terminal."""

from __future__ import annotations

from tenantctl.operator.daytwo.describe import SYMBOL, TreeNode

__all__ = ["render_tree"]


def render_tree(root: TreeNode, width: int = 200) -> str:
    """The tree as rich draws it, plain text (marks are symbols, not colours, so it reads in a log)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.tree import Tree

    def label(node: TreeNode) -> str:
        text = f"{SYMBOL[node.mark]} {node.label}"
        text += f": {node.detail}" if node.detail else ""
        text += f"\n  → {node.next}" if node.next else ""
        return escape(text)

    def build(node: TreeNode, into: Tree) -> None:
        for child in node.children:
            build(child, into.add(label(child)))

    tree = Tree(label(root))
    build(root, tree)
    console = Console(width=width, color_system=None, force_terminal=False)
    with console.capture() as captured:
        console.print(tree)
    return "\n".join(line.rstrip() for line in captured.get().splitlines()) + "\n"
