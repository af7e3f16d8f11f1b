"""A token for the serve tests that ask one."""

TOKEN = "Zr3Yb9-qL2x7Wn4Kc8Vt1Hs6Pd0Mf5Gj"
