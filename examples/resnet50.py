"""ResNet-50 (He et al. 2015, torchvision's layout: bottleneck blocks, stride on the 3x3 conv)
written with ember.nn, and a synthetic-data training step timed as images/s.

    python examples/resnet50.py [--batch 256] [--steps 20] [--amp] [--channels-last]

The model has torchvision's 25,557,032 parameters; the script trains on the GPU when one is
usable (on the CPU pass a small --batch and --size).
"""

from __future__ import annotations

import argparse
import time

import ember
from ember import nn


def build(nn, flatten):
    """The ResNet-50 constructor for a library with PyTorch's nn API (ember's, or PyTorch's
    itself for the benchmark beside it): ``build(ember.nn, ember.flatten)(num_classes)``."""

    class Bottleneck(nn.Module):
        expansion = 4

        def __init__(self, inplanes, planes, stride=1, downsample=None):
            super().__init__()
            width = planes
            self.conv1 = nn.Conv2d(inplanes, width, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(width)
            self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(width)
            self.conv3 = nn.Conv2d(width, planes * self.expansion, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(planes * self.expansion)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = downsample

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.relu(self.bn2(self.conv2(out)))
            out = self.bn3(self.conv3(out))
            return self.relu(out + identity)

    class ResNet(nn.Module):
        def __init__(self, layers=(3, 4, 6, 3), num_classes=1000):
            super().__init__()
            self.inplanes = 64
            self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
            self.layer1 = self._make_layer(64, layers[0])
            self.layer2 = self._make_layer(128, layers[1], stride=2)
            self.layer3 = self._make_layer(256, layers[2], stride=2)
            self.layer4 = self._make_layer(512, layers[3], stride=2)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(512 * Bottleneck.expansion, num_classes)
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

        def _make_layer(self, planes, blocks, stride=1):
            downsample = None
            if stride != 1 or self.inplanes != planes * Bottleneck.expansion:
                downsample = nn.Sequential(
                    nn.Conv2d(
                        self.inplanes, planes * Bottleneck.expansion, 1, stride=stride, bias=False
                    ),
                    nn.BatchNorm2d(planes * Bottleneck.expansion),
                )
            layers = [Bottleneck(self.inplanes, planes, stride, downsample)]
            self.inplanes = planes * Bottleneck.expansion
            layers += [Bottleneck(self.inplanes, planes) for _ in range(1, blocks)]
            return nn.Sequential(*layers)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(flatten(self.avgpool(x), 1))

    def resnet50(num_classes=1000):
        return ResNet((3, 4, 6, 3), num_classes)

    return resnet50


resnet50 = build(nn, ember.flatten)


def train_steps(model, batch, size, steps, device, amp=False, channels_last=False):
    """Seconds of the first step and images/s over the following `steps` steps."""
    fmt = ember.channels_last if channels_last else ember.contiguous_format
    model.to(device).to(memory_format=fmt).train()
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    scaler = ember.amp.GradScaler(enabled=amp and device == "cuda")
    low = ember.float16 if device == "cuda" else ember.bfloat16
    rng = ember.random.default_rng(0)
    x = rng.standard_normal(size=(batch, 3, size, size), dtype="float32", device=device)
    x = x.contiguous(memory_format=fmt)
    y = rng.integers(0, model.fc.out_features, size=(batch,), device=device)
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        with ember.autocast(device, dtype=low, enabled=amp):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss

    t0 = time.perf_counter()
    float(step())
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(steps):
        loss = step()
    float(loss)
    return first, batch * steps / (time.perf_counter() - t0)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--amp", action="store_true")
    ap.add_argument("--channels-last", action="store_true")
    args = ap.parse_args(argv)
    device = "cuda" if ember.cuda.is_available() else "cpu"
    model = resnet50()
    first, ips = train_steps(
        model, args.batch, args.size, args.steps, device, args.amp, args.channels_last
    )
    print(f"ResNet-50 on {device}: first step {first:.2f} s, {ips:.1f} images/s")
    return ips


if __name__ == "__main__":
    main()
