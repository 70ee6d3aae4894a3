"""``tag_safe_json`` writes numbers as ``JSON.stringify`` does (docs/api.md, ECMAScript
``Number::toString``): checked against strings node wrote, and against the rules."""

from __future__ import annotations

import json
import math
import re

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionref.codecs import js_json, tag_safe_json

NODE_WROTE = [
    # Each (float, JSON.stringify(float)) pair was written once by Node.js v20.20.2 with
    # `console.log(JSON.stringify(x))` for each literal x; the floats are edge cases, then
    # random bit patterns, then one random value every third power of ten.
    (1.0, "1"),
    (-0.0, "0"),
    (1e21, "1e+21"),
    (1e-07, "1e-7"),
    (5e-324, "5e-324"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
    (0.1, "0.1"),
    (1.23e-18, "1.23e-18"),
    (1.2345678901234568e20, "123456789012345680000"),
    (1e20, "100000000000000000000"),
    (9.999999999999999e20, "999999999999999900000"),
    (1e-06, "0.000001"),
    (1.5e-06, "0.0000015"),
    (1.234e-06, "0.000001234"),
    (9007199254740992.0, "9007199254740992"),
    (9007199254740994.0, "9007199254740994"),
    (-2.5, "-2.5"),
    (0.3333333333333333, "0.3333333333333333"),
    (2.2250738585072014e-308, "2.2250738585072014e-308"),
    (100.0, "100"),
    (1e300, "1e+300"),
    (-1e-300, "-1e-300"),
    (7.462493942986567e-154, "7.462493942986567e-154"),
    (-7.097705058157763e179, "-7.097705058157763e+179"),
    (4.3826179345303335e74, "4.3826179345303335e+74"),
    (2.856886967135656e73, "2.856886967135656e+73"),
    (-4.471056368938962e-255, "-4.471056368938962e-255"),
    (3.0114380137868895e140, "3.0114380137868895e+140"),
    (-7.145166931834175e122, "-7.145166931834175e+122"),
    (-4.1188609495961535e-144, "-4.1188609495961535e-144"),
    (3.441450584333372e216, "3.441450584333372e+216"),
    (8.253384648636019e235, "8.253384648636019e+235"),
    (-1.753979864078648e-11, "-1.753979864078648e-11"),
    (3.53519695024539e-123, "3.53519695024539e-123"),
    (4.2701458340041713e213, "4.2701458340041713e+213"),
    (5.648776482886579e-93, "5.648776482886579e-93"),
    (1.1671275483071712e24, "1.1671275483071712e+24"),
    (6.838980769196247e235, "6.838980769196247e+235"),
    (1.0903531135518482e-146, "1.0903531135518482e-146"),
    (5.6336363948689205e177, "5.6336363948689205e+177"),
    (1.7776007492949746e178, "1.7776007492949746e+178"),
    (-4.246669325324146e-287, "-4.246669325324146e-287"),
    (4.015300681281689e-262, "4.015300681281689e-262"),
    (2.3254700232838088e247, "2.3254700232838088e+247"),
    (-1.536003529148315e206, "-1.536003529148315e+206"),
    (-3.7074198807014127e-215, "-3.7074198807014127e-215"),
    (4.962090235195751e-09, "4.962090235195751e-9"),
    (3.6817938958353782e-06, "0.0000036817938958353782"),
    (0.008144156286107507, "0.008144156286107507"),
    (3.264475967591076, "3.264475967591076"),
    (8817.140884451013, "8817.140884451013"),
    (9234645.019156992, "9234645.019156992"),
    (4754708399.067956, "4754708399.067956"),
    (2085159798461.0315, "2085159798461.0315"),
    (4870837060045504.0, "4870837060045504"),
    (1.9887389372751114e18, "1988738937275111400"),
    (3.68903032547504e21, "3.68903032547504e+21"),
]
JSON_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?(e[+-][1-9][0-9]*)?")


@pytest.mark.parametrize(("number", "written"), NODE_WROTE)
def test_a_float_is_written_as_node_writes_it(number: float, written: str) -> None:
    assert tag_safe_json(number).decode() == written
    assert tag_safe_json({"a": [number, "<"]}).decode() == f'{{"a":[{written},"\\u003c"]}}'


def test_nan_and_infinities_are_null() -> None:
    assert tag_safe_json([math.nan, math.inf, -math.inf]) == b"[null,null,null]"


class Measured(msgspec.Struct):
    name: str
    value: float | None
    nested: list[Measured] = []


def test_a_struct_holding_floats_writes_them_as_javascript() -> None:
    measured = Measured("<", 1e21, [Measured("b", -0.0)])
    assert tag_safe_json(measured) == (
        b'{"name":"\\u003c","value":1e+21,"nested":[{"name":"b","value":0,"nested":[]}]}'
    )


@pytest.mark.parametrize("value", ["x,1.5 [2e3", {"t": ",1.0", "\ud800": [2**70, ":1e5"]}])
def test_text_that_looks_like_a_float_is_written_as_it_is(value: object) -> None:
    assert tag_safe_json(value) == js_json(value).replace(b"<", b"\\u003c")


def significant_digits(text: str) -> str:
    """The digits of a decimal numeral, without sign, point, exponent or outer zeros."""
    return re.sub(r"[^0-9]", "", re.split("[eE]", text)[0]).strip("0")


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_float_is_written_in_ecmascript_form(number: float) -> None:
    written = tag_safe_json(number).decode()
    assert JSON_NUMBER.fullmatch(written), written
    assert float(written) == number and written != "-0"
    # the shortest digits that read back (Python's repr finds the same ones)
    assert significant_digits(written) == significant_digits(repr(number))
    # exponent form exactly when the decimal exponent is at least 21 or at most -7
    assert ("e" in written) == (number != 0 and not 1e-6 <= abs(number) < 1e21)
    assert [float(item) for item in json.loads(tag_safe_json([number]))] == [number]
