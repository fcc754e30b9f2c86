-- vector: three-dimensional vectors, as CC: Tweaked's vector API. Written for fakecraft from
-- CC's documentation; it shares no code with CC's ROM.

local expect = dofile("rom/modules/main/cc/expect.lua").expect;

local vector_mt;
local methods = {};

local function check_vector(index, v)
  if getmetatable(v) ~= vector_mt then
    error(("bad argument #%d (vector expected, got %s)"):format(index, type(v)), 3);
  end
end

local function make(x, y, z)
  return setmetatable({ x = x, y = y, z = z }, vector_mt);
end

function methods.add(self, o)
  check_vector(1, self);
  check_vector(2, o);
  return make(self.x + o.x, self.y + o.y, self.z + o.z);
end

function methods.sub(self, o)
  check_vector(1, self);
  check_vector(2, o);
  return make(self.x - o.x, self.y - o.y, self.z - o.z);
end

function methods.mul(self, m)
  check_vector(1, self);
  expect(2, m, "number");
  return make(self.x * m, self.y * m, self.z * m);
end

function methods.div(self, m)
  check_vector(1, self);
  expect(2, m, "number");
  return make(self.x / m, self.y / m, self.z / m);
end

function methods.unm(self)
  check_vector(1, self);
  return make(-self.x, -self.y, -self.z);
end

function methods.dot(self, o)
  check_vector(1, self);
  check_vector(2, o);
  return self.x * o.x + self.y * o.y + self.z * o.z;
end

function methods.cross(self, o)
  check_vector(1, self);
  check_vector(2, o);
  return make(
    self.y * o.z - self.z * o.y,
    self.z * o.x - self.x * o.z,
    self.x * o.y - self.y * o.x
  );
end

function methods.length(self)
  check_vector(1, self);
  return math.sqrt(self.x * self.x + self.y * self.y + self.z * self.z);
end

function methods.normalize(self)
  check_vector(1, self);
  return self:div(self:length());
end

function methods.round(self, tolerance)
  check_vector(1, self);
  expect(2, tolerance, "number", "nil");
  tolerance = tolerance or 1;
  local function r(n) return math.floor((n + tolerance * 0.5) / tolerance) * tolerance; end
  return make(r(self.x), r(self.y), r(self.z));
end

function methods.tostring(self)
  check_vector(1, self);
  return self.x .. "," .. self.y .. "," .. self.z;
end

function methods.equals(self, o)
  check_vector(1, self);
  check_vector(2, o);
  return self.x == o.x and self.y == o.y and self.z == o.z;
end

vector_mt = {
  __name = "vector",
  __index = methods,
  __add = methods.add,
  __sub = methods.sub,
  __mul = methods.mul,
  __div = methods.div,
  __unm = methods.unm,
  __tostring = methods.tostring,
  __eq = methods.equals,
};

function new(x, y, z)
  expect(1, x, "number", "nil");
  expect(2, y, "number", "nil");
  expect(3, z, "number", "nil");
  return make(x or 0, y or 0, z or 0);
end
