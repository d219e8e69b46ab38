"""Symbolic dims: a dim's size as an expression over the graph's named dims (`batch*seq`,
`seq//2`, `h-2`), so that two unknown dims computed the same way are known to be equal.

A `Dim` is an integer polynomial over atoms, in one canonical form: an atom is a symbol (a named
dim, with a range: at least 1 unless told otherwise, `seq in [1, 512]`) or the floor division of
an expression by a positive integer. Two
dims are the same size when their forms are equal. Arithmetic on `Dim`s and ints gives a `Dim`,
or an int when the result is a constant, so shape functions written for ints run on them
unchanged. Whatever a form cannot decide (whether `batch == 1`, whether `seq < 8`, `int(batch)`)
raises `Undecided`: the caller treats the result as unknown, never as a guess.
"""

from __future__ import annotations

from collections.abc import Mapping

Monomial = tuple["Atom", ...]
"""A product of atoms, sorted; () is the constant term."""


class Undecided(Exception):
    """A question about a symbolic dim that its form cannot answer."""


class Symbol:
    """The atom of a named dim and the range it may take (`high` None: unbounded)."""

    __slots__ = ("high", "low", "name")

    def __init__(self, name: str, low: int = 1, high: int | None = None):
        self.name = name
        self.low = low
        self.high = high

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Symbol) and (self.name, self.low, self.high) == (other.name, other.low, other.high)

    def __hash__(self) -> int:
        return hash(self.name)

    def __str__(self) -> str:
        return self.name

    def bounds(self) -> tuple[int | None, int | None]:
        return self.low, self.high


class FloorDiv:
    """The atom `expr // divisor` (divisor > 0) of an expression that does not divide exactly."""

    __slots__ = ("divisor", "expr")

    def __init__(self, expr: Dim, divisor: int):
        self.expr = expr
        self.divisor = divisor

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FloorDiv) and self.divisor == other.divisor and self.expr.same(other.expr)

    def __hash__(self) -> int:
        return hash((self.expr, self.divisor))

    def __str__(self) -> str:
        inner = str(self.expr)
        return f"({inner})//{self.divisor}" if len(self.expr.terms) > 1 else f"{inner}//{self.divisor}"

    def bounds(self) -> tuple[int | None, int | None]:
        low, high = self.expr.bounds()
        return (
            None if low is None else low // self.divisor,
            None if high is None else high // self.divisor,
        )


Atom = Symbol | FloorDiv


def _key(atom: Atom) -> tuple[int, str]:
    return (0 if isinstance(atom, Symbol) else 1, str(atom))


def _make(terms: Mapping[Monomial, int]) -> int | Dim:
    kept = {m: c for m, c in terms.items() if c}
    if not kept:
        return 0
    if set(kept) == {()}:
        return kept[()]
    return Dim(kept)


def _terms(x: int | Dim) -> dict[Monomial, int]:
    if isinstance(x, Dim):
        return dict(x.terms)
    if isinstance(x, bool) or not isinstance(x, int):
        raise Undecided(f"{x!r} is not an integer size")
    return {(): int(x)} if x else {}


class Dim:
    """A symbolic size (see the module docstring). Build one with `symbol(name)`."""

    __slots__ = ("_hash", "terms")

    def __init__(self, terms: Mapping[Monomial, int]):
        self.terms: dict[Monomial, int] = dict(sorted(terms.items(), key=lambda t: (not t[0], [_key(a) for a in t[0]])))
        self._hash = hash(tuple(self.terms.items()))

    # -- identity -------------------------------------------------------------------------------
    def same(self, other: object) -> bool:
        """Structural equality: the same expression (so the same size at every binding)."""
        return isinstance(other, Dim) and self.terms == other.terms

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (Dim, int)) or isinstance(other, bool):
            return NotImplemented
        difference = self - other
        if isinstance(difference, int):
            return difference == 0
        low, high = difference.bounds()
        if (low is not None and low > 0) or (high is not None and high < 0):
            return False
        raise Undecided(f"whether {self} == {other}")

    def __ne__(self, other: object) -> bool:
        same = self.__eq__(other)
        return same if same is NotImplemented else not same

    def _compare(self, other: int | Dim) -> tuple[int | None, int | None]:
        difference = self - other
        if isinstance(difference, int):
            return difference, difference
        return difference.bounds()

    def __lt__(self, other: int | Dim) -> bool:
        low, high = self._compare(other)
        if high is not None and high < 0:
            return True
        if low is not None and low >= 0:
            return False
        raise Undecided(f"whether {self} < {other}")

    def __le__(self, other: int | Dim) -> bool:
        low, high = self._compare(other)
        if high is not None and high <= 0:
            return True
        if low is not None and low > 0:
            return False
        raise Undecided(f"whether {self} <= {other}")

    def __gt__(self, other: int | Dim) -> bool:
        return not self.__le__(other)

    def __ge__(self, other: int | Dim) -> bool:
        return not self.__lt__(other)

    def __bool__(self) -> bool:
        return self != 0

    def __int__(self) -> int:
        raise Undecided(f"the value of {self}")

    __index__ = __int__

    def bounds(self) -> tuple[int | None, int | None]:
        """A lower and an upper bound (None: unbounded), by interval arithmetic over the atoms'
        ranges (exact for one atom, safe for several)."""
        low: int | None = 0
        high: int | None = 0
        for monomial, coefficient in self.terms.items():
            term: tuple[int | None, int | None] = (coefficient, coefficient)
            for atom in monomial:
                term = _times(term, atom.bounds())
            low = None if low is None or term[0] is None else low + term[0]
            high = None if high is None or term[1] is None else high + term[1]
        return low, high

    # -- arithmetic -----------------------------------------------------------------------------
    def __add__(self, other: int | Dim) -> int | Dim:
        terms = _terms(self)
        for m, c in _terms(other).items():
            terms[m] = terms.get(m, 0) + c
        return _make(terms)

    __radd__ = __add__

    def __neg__(self) -> int | Dim:
        return _make({m: -c for m, c in self.terms.items()})

    def __pos__(self) -> Dim:
        return self

    def __sub__(self, other: int | Dim) -> int | Dim:
        return self + (-other)

    def __rsub__(self, other: int | Dim) -> int | Dim:
        return (-self) + other

    def __mul__(self, other: int | Dim) -> int | Dim:
        terms: dict[Monomial, int] = {}
        for m1, c1 in _terms(self).items():
            for m2, c2 in _terms(other).items():
                m = tuple(sorted(m1 + m2, key=_key))
                terms[m] = terms.get(m, 0) + c1 * c2
        return _make(terms)

    __rmul__ = __mul__

    def __floordiv__(self, other: int | Dim) -> int | Dim:
        if isinstance(other, Dim):
            return _divide_exactly(self, other)
        if isinstance(other, bool) or not isinstance(other, int) or other <= 0:
            raise Undecided(f"{self} // {other}")
        if all(c % other == 0 for c in self.terms.values()):
            return _make({m: c // other for m, c in self.terms.items()})
        return Dim({(FloorDiv(self, other),): 1})

    def __rfloordiv__(self, other: int) -> int | Dim:
        raise Undecided(f"{other} // {self}")

    def __mod__(self, other: int | Dim) -> int | Dim:
        return self - (self // other) * other

    def __rmod__(self, other: int) -> int | Dim:
        raise Undecided(f"{other} % {self}")

    def __truediv__(self, other: int | Dim) -> int | Dim:
        quotient = self // other
        if quotient * other == self:
            return quotient
        raise Undecided(f"{self} / {other} is not exact")

    def __str__(self) -> str:
        parts: list[str] = []
        for monomial, coefficient in self.terms.items():
            alone = len(monomial) == 1 and abs(coefficient) == 1
            factors = [str(a) if isinstance(a, Symbol) or alone else f"({a})" for a in monomial]
            if not factors:
                body = str(abs(coefficient))
            elif abs(coefficient) == 1:
                body = "*".join(factors)
            else:
                body = "*".join([str(abs(coefficient)), *factors])
            sign = "-" if coefficient < 0 else "+"
            parts.append(body if not parts and sign == "+" else f"-{body}" if not parts else f" {sign} {body}")
        return "".join(parts)

    def __repr__(self) -> str:
        return f"Dim({self})"


def _times(a: tuple[int | None, int | None], b: tuple[int | None, int | None]) -> tuple[int | None, int | None]:
    """The interval of a product (None: unbounded on that side)."""
    if None in a or None in b:
        if all(x is not None and x >= 0 for x in (a[0], b[0])):
            return a[0] * b[0], None  # type: ignore[operator]
        if a[0] is not None and a[0] == a[1] and a[0] < 0 and b[0] is not None and b[0] >= 0:
            return None, a[0] * b[0]  # a negative constant times a nonnegative unbounded atom
        return None, None
    products = [x * y for x in a for y in b]  # type: ignore[operator]
    return min(products), max(products)


def _divide_exactly(numerator: Dim, divisor: Dim) -> int | Dim:
    """`numerator // divisor` when the divisor (one monomial) divides every term, else Undecided."""
    if len(divisor.terms) != 1:
        raise Undecided(f"{numerator} // ({divisor})")
    ((atoms, factor),) = divisor.terms.items()
    terms: dict[Monomial, int] = {}
    for monomial, coefficient in numerator.terms.items():
        rest = list(monomial)
        for atom in atoms:
            if atom not in rest:
                raise Undecided(f"{numerator} // {divisor}")
            rest.remove(atom)
        if coefficient % factor:
            raise Undecided(f"{numerator} // {divisor}")
        terms[tuple(rest)] = coefficient // factor
    return _make(terms)


class SymbolicType:
    """What `types.tensor` builds when a shape function computed on `Dim`s: the element type, the
    symbolic dims and the format, for the shape analysis to read (never an IR type)."""

    __slots__ = ("dims", "element_type", "encoding")

    def __init__(self, element_type: object, dims: tuple[int | Dim | None, ...], encoding: object):
        self.element_type = element_type
        self.dims = dims
        self.encoding = encoding

    def get_shape(self) -> tuple[int, ...]:
        return tuple(d if isinstance(d, int) else -1 for d in self.dims)


def symbol(name: str, low: int = 1, high: int | None = None) -> Dim:
    """The dim named `name`, in [low, high] (high None: unbounded)."""
    return Dim({(Symbol(name, low, high),): 1})


__all__ = ["Dim", "FloorDiv", "Symbol", "SymbolicType", "Undecided", "symbol"]
