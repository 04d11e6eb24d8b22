"""Fixtures shared by the Python tests."""

import pytest

# A 1 kg ball of radius 0.1 m with a free joint above a plane (MJCF).
BALL = """
<mujoco model="ball_on_floor">
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1" friction="0.8"/>
    <body name="ball">
      <freejoint name="free"/>
      <inertial pos="0 0 0" mass="1" diaginertia="0.004 0.004 0.004"/>
      <geom name="ball" type="sphere" size="0.1"/>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.fixture
def ball_path(tmp_path):
    path = tmp_path / "ball.xml"
    path.write_text(BALL)
    return path
