import ember
x = ember.ones(1, device="cuda")
for _ in range(20000):
    x + x
ember.cuda.synchronize()
for _ in range(400000):
    x + x
ember.cuda.synchronize()
