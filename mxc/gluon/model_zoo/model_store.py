"""Where pretrained model files live (``mx.gluon.model_zoo.model_store``).

A pretrained model loads from ``<root>/<name>-<hash8>.params``, the file name MXNet 1.9.1's
model store uses (so a directory MXNet filled, ``~/.mxnet/models`` by default, works as it is).
A missing file (or one whose SHA-1 is not the published one) is fetched as MXNet does, from
``gluon/models/<name>-<hash8>.zip`` of the repository ``MXNET_GLUON_REPO`` names: a URL
(MXNet's repository by default) or a local directory / ``file://`` URL laid out the same way.
When that fails an MXNetError says which file to put where.
"""

__all__ = ['get_model_file', 'purge']

import hashlib
import os
import warnings
import zipfile

from ... import base
from ..._core import atomic_write as _atomic
from ...base import MXNetError
from ..utils import download, _get_repo_file_url

# SHA-1 of every published model file, by model name (as MXNet 1.9.1's store).
_model_sha1 = {
    'alexnet': '44335d1f0046b328243b32a26a4fbd62d9057b45',
    'densenet121': 'f27dbf2dbd5ce9a80b102d89c7483342cd33cb31',
    'densenet161': 'b6c8a95717e3e761bd88d145f4d0a214aaa515dc',
    'densenet169': '2603f878403c6aa5a71a124c4a3307143d6820e9',
    'densenet201': '1cdbc116bc3a1b65832b18cf53e1cb8e7da017eb',
    'inceptionv3': 'ed47ec45a937b656fcc94dabde85495bbef5ba1f',
    'mobilenet0.25': '9f83e440996887baf91a6aff1cccc1c903a64274',
    'mobilenet0.5': '8e9d539cc66aa5efa71c4b6af983b936ab8701c3',
    'mobilenet0.75': '529b2c7f4934e6cb851155b22c96c9ab0a7c4dc2',
    'mobilenet1.0': '6b8c5106c730e8750bcd82ceb75220a3351157cd',
    'mobilenetv2_1.0': '36da4ff1867abccd32b29592d79fc753bca5a215',
    'mobilenetv2_0.75': 'e2be7b72a79fe4a750d1dd415afedf01c3ea818d',
    'mobilenetv2_0.5': 'aabd26cd335379fcb72ae6c8fac45a70eab11785',
    'mobilenetv2_0.25': 'ae8f9392789b04822cbb1d98c27283fc5f8aa0a7',
    'resnet18_v1': 'a0666292f0a30ff61f857b0b66efc0228eb6a54b',
    'resnet34_v1': '48216ba99a8b1005d75c0f3a0c422301a0473233',
    'resnet50_v1': '0aee57f96768c0a2d5b23a6ec91eb08dfb0a45ce',
    'resnet101_v1': 'd988c13d6159779e907140a638c56f229634cb02',
    'resnet152_v1': '671c637a14387ab9e2654eafd0d493d86b1c8579',
    'resnet18_v2': 'a81db45fd7b7a2d12ab97cd88ef0a5ac48b8f657',
    'resnet34_v2': '9d6b80bbc35169de6b6edecffdd6047c56fdd322',
    'resnet50_v2': 'ecdde35339c1aadbec4f547857078e734a76fb49',
    'resnet101_v2': '18e93e4f48947e002547f50eabbcc9c83e516aa6',
    'resnet152_v2': 'f2695542de38cf7e71ed58f02893d82bb409415e',
    'squeezenet1.0': '264ba4970a0cc87a4f15c96e25246a1307caf523',
    'squeezenet1.1': '33ba0f93753c83d86e1eb397f38a667eaf2e9376',
    'vgg11': 'dd221b160977f36a53f464cb54648d227c707a05',
    'vgg11_bn': 'ee79a8098a91fbe05b7a973fed2017a6117723a8',
    'vgg13': '6bc5de58a05a5e2e7f493e2d75a580d83efde38c',
    'vgg13_bn': '7d97a06c3c7a1aecc88b6e7385c2b373a249e95e',
    'vgg16': 'e660d4569ccb679ec68f1fd3cce07a387252a90a',
    'vgg16_bn': '7f01cf050d357127a73826045c245041b0df7363',
    'vgg19': 'ad2f660d101905472b83590b59708b71ea22b2e5',
    'vgg19_bn': 'f360b758e856f1074a85abd5fd873ed1d98297c3',
}

_DEFAULT_ROOT = os.path.join(base.data_dir(), 'models')


def short_hash(name):
    """First 8 hex digits of the model file's SHA-1 (part of its file name)."""
    if name not in _model_sha1:
        raise ValueError('Pretrained model for {name} is not available.'.format(name=name))
    return _model_sha1[name][:8]


def _sha1_of(path):
    digest = hashlib.sha1()
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 20), b''):
            digest.update(chunk)
    return digest.hexdigest()


def _repo_archive(file_name, root):
    """The model's zip in the repository MXNET_GLUON_REPO names (MXNet's when unset): a local
    directory or file:// URL is read in place; an http(s) one is downloaded into `root`.
    (path, downloaded?)."""
    repo = os.environ.get('MXNET_GLUON_REPO', '')
    if repo.startswith('file://'):
        repo = repo[len('file://'):]
    if repo and os.path.isdir(repo):
        return os.path.join(repo, 'gluon', 'models', file_name + '.zip'), False
    url = _get_repo_file_url('gluon/models', file_name + '.zip')
    return download(url, path=os.path.join(root, file_name + '.zip'), overwrite=True), True


def _unpack(archive, file_name, file_path, expected):
    """``file_name``.params out of the zip (that member only: no path of the archive is
    trusted) to ``file_path``, written whole or not at all; its SHA-1 checked."""
    member = file_name + '.params'
    with zipfile.ZipFile(archive) as zf:
        if member not in zf.namelist():
            raise MXNetError('Archive %s does not hold %s' % (archive, member))
        with zf.open(member) as src:
            _atomic.write_from(file_path, src)
    if _sha1_of(file_path) != expected:
        os.remove(file_path)
        raise MXNetError('Archive %s holds a parameter file whose SHA-1 is not %s'
                         % (archive, expected))
    return file_path


def get_model_file(name, root=_DEFAULT_ROOT):
    """Path of the pretrained parameter file of model ``name`` under ``root``, fetched as
    MXNet does when it is not there or its SHA-1 is not the published one: the archive
    ``gluon/models/<name>-<hash8>.zip`` of the repository MXNET_GLUON_REPO names (a local
    directory, or a URL; MXNet's repository by default) is unpacked into ``root``. An MXNetError
    says which file to put where when that fails (no network, say)."""
    file_name = '{}-{}'.format(name, short_hash(name))
    root = os.path.expanduser(root)
    file_path = os.path.join(root, file_name + '.params')
    expected = _model_sha1[name]
    if os.path.exists(file_path):
        if _sha1_of(file_path) == expected:
            return file_path
        warnings.warn('Mismatch in the content of model file %s detected. Downloading again.'
                      % file_path)
    os.makedirs(root, exist_ok=True)
    try:
        archive, downloaded = _repo_archive(file_name, root)
    except Exception as e:      # noqa: BLE001  a download failure of any kind
        raise MXNetError(
            'Pretrained weights for %r could not be fetched (%s). Put %s.params (SHA-1 %s, from '
            'the MXNet model store, e.g. a copy of the ~/.mxnet/models directory MXNet filled) '
            'at %s, pass root= naming the directory that holds it, or set MXNET_GLUON_REPO to '
            'a repository that has gluon/models/%s.zip.'
            % (name, e, file_name, expected, file_path, file_name)) from None
    if not os.path.exists(archive):
        raise MXNetError('Pretrained weights for %r: %s is not in the repository %s; put %s.params '
                         '(SHA-1 %s) at %s' % (name, archive, os.environ.get('MXNET_GLUON_REPO'),
                                               file_name, expected, file_path))
    try:
        return _unpack(archive, file_name, file_path, expected)
    finally:
        if downloaded:
            os.remove(archive)


def purge(root=_DEFAULT_ROOT):
    """Delete every ``.params`` file in ``root``."""
    root = os.path.expanduser(root)
    if not os.path.isdir(root):
        return
    for fname in os.listdir(root):
        if fname.endswith('.params'):
            os.remove(os.path.join(root, fname))
