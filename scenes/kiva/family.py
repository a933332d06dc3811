"""The ``kiva`` family's declaration."""
from engine.family import Family, Setting

from .library import check_objects
from .presentation import NATIVE
from .reading import read_choice

FAMILY = Family("kiva", "KiVA: visual analogies on rendered 3D objects (colour, size, number, rotation, reflection) "
                        "in kids', adults' and compositional variants, asked in three stages.", reader=read_choice,
                native_size=NATIVE,
                settings=[Setting("objects", "a folder of object meshes (OBJ/PLY/GLB/GLTF, with their own colours and "
                                             "textures) or object images (RGBA PNG, or a plain background that is "
                                             "keyed out) used in every trial; empty: the built-in objects", "",
                                  env="PROCVIS_KIVA_OBJECTS", check=check_objects)])


# what each domain changes; in a composite, where the extra copies sit (which option) also
# moves the spread of all its objects, so a count is a position statistic there too
_PROPERTIES = {"colour": {"color"}, "size": {"size"}, "number": {"count", "position"}, "rotation": {"shape"},
               "reflection": {"shape"}}


@FAMILY.concept
def _changed(task, kind):
    """What a trial's rule changes (so a rule-blind probe may not read it): the domains in
    the task id, e.g. ``kiva_compositional/colour+size/...`` -> color and size."""
    return set().union(*(_PROPERTIES[d] for d in task.id.split("/")[1].split("+")))
