"""The Percept-V question prompts, verbatim from the benchmark (appendix A.1), and the
instruction appended to every one of them."""

SUFFIX = " -Please provide a short and precise answer according to the given format. -Follow the output format strictly."

PALETTE_LIST = ("[black, gray, brown, maroon, red, coral, tan, orange, ivory, goldenrod, yellow, green, olive, "
                "turquoise, skyblue, blue, lavender, purple, pink, fuchsia]")

PROMPTS = {
    "change_colour": (
        "-These are two identical images with circles of different colours. - The colours of the circles at the same "
        "position in the two images may be different. - Count the number of differently coloured circles between the "
        "two images. - The output must be given in a single line in the form of COUNT:x"),
    "circle_boxes": (
        "- This is an image with some red circles divided and a blue partition that divides the image into two sides. "
        "- Some circles are on the left side of the partition whereas some are on the right. Note that, a side of the "
        "image may be completely empty as well. - Determine the number of circles to be moved from the side with more "
        "number of circles to the side with less number of circles so that each side has equal number of circles. - In "
        "case of both the sides having equal number of circles, return zero. - The output must be given in a single "
        "line in the form of COUNT:x where x is the number of circles to be transferred"),
    "circle_location": (
        "- This is an image with some black circles drawn in the four quadrants - The quadrants are numbered in the "
        "default way i.e. quadrant 1 is the rightmost and topmost quadrant, quadrant 2 is the leftmost and topmost, "
        "quadrant 3 is the leftmost and lowest and quadrant 4 is the rightmost and lowest. - Determine the quadrant "
        "with the most number of black circles and the count of black circles in that quadrant. - In case of a tie, "
        "return the lesser quadrant number. - The output must be given in a single line in the form of QUADRANT:x "
        "COUNT:y where x is the quadrant number and y is the count of circles."),
    "circle_right_triangle": (
        "- This is a grid which contains some circles and triangles - Check if any triangle cell has a circle cell to "
        "its immediate right. - The last line of output should be \"NO\" if no such cell exists and \"YES\" otherwise."),
    "colours_present": (
        "- This image contains some shapes in different colours. - The colours belong to the following list - "
        f"{PALETTE_LIST} - No colour is repeated - Produce a list of yes or no; write yes in the list if the colour at "
        "the corresponding index of the above list is present and no if it is absent. - The output should be written "
        "in a single line as a comma-separated list of yes or no, written in order of the given list of colours. - For "
        "example, the output should be of the form ANSWER: yes , no, no, yes and so on."),
    "comparing_size": (
        "- This is an image with several rows of circles where each row is above a horizontal line. - The image may "
        "also contain a single row with a blue and a green circle. - Each row contains two colored circles (one blue "
        "and one green) of different sizes. - Analyse which circle is bigger between the two in each row. - The last "
        "line of the output should be of form \"ANSWER:\" followed by the space separated color answers for all the "
        "rows in the image. - For example ANSWER: Blue Green Blue"),
    "count_coloured_circles": (
        "- This is an image containing some colored circles - Count the total number of red circles in the image - "
        "Last line of the output must be of the form COUNT:x"),
    "counting_circles": (
        "- This is an image containing some black circles - Count the total number of circles in the image - The last "
        "line of the output should be of form COUNT:x."),
    "counting_locations": (
        "- There will be an image containing a rectangle and some circles above and below it - Count the number of "
        "circles above the rectangle and below the rectangle - The output must be of form in a single line ABOVE:x "
        "BELOW:y"),
    "counting_shapes": (
        "- This is an image containing shapes such as circles, triangles and squares - Count the number of circles, "
        "triangles and squares in the image - The last line of the output must be of the form CIRCLES:x TRIANGLES:y "
        "SQUARES:z"),
    "cross_and_knots": (
        "- This is a grid containing some black X. - Each cell is given a coordinate (x,y) which is (row,column) with "
        "0 based indexing. - An adjacent cell to a cell A is any cell sharing an edge with A - A safe cell is a cell "
        "that is not adjacent to any black X. - Output the coordinates of any one safe cell as labelled in the grid. - "
        "If no such cell exists output None. - The last line of the output should just contain the cell coordinates "
        "(x,y) or None and nothing else."),
    "graph_counting": (
        "- This is a graph where the blue colored circles are nodes and the lines joining them are edges. - The graph "
        "may contain a single blue node with no edges. - The graph may be disconnected. - Count the number of nodes "
        "and edges in the graph. - Last line of the output must be of the form NODES:x EDGES:y."),
    "grid_path": (
        "- This is a grid which contains some circles, triangles and squares. - Travel from cell labelled S to cell "
        "labelled E. - Follow the path marked by the black line and arrows. - Write down the sequence of shapes seen "
        "while moving along this path. - The shapes present in the S and E cells should also be included in the "
        "sequence. - The last line of the output should be a comma-separated list of shapes without colors, written "
        "in order of visiting of form SHAPES : Shape 1 , Shape 2 and so on."),
    "identifying_shapes": (
        "- This is an image with several rows of different shapes where each row is above a horizontal line. - Each "
        "row contains a coloured shape. - The image may also contain a single shape. - Identify the shape present in "
        "each row. - In case there is a single shape, treat it as a single row. - The output should have only a "
        "single line containing the answer. - The output format should be \"ANSWER:\" followed by the space separated "
        "shape names. - For example, ANSWER: Circle Triangle Circle"),
    "inside_circles": (
        "- This is an image containing some black circles and a single red dot - Determine if the red dot is "
        "contained inside any circle in the image - Note that a circle containing the red dot means the centre of the "
        "dot is present inside the circumference of the circle - The last line of the output should be of form "
        "ANSWER: x where x is Yes if the dot is contained in any circle and No otherwise."),
    "layered_colours": (
        "- This image contains some concentric circles in different colours. - The image may also contain a single "
        "circle - Write down the sequence of colours seen from inside to outside. - In case of a single circle in the "
        "image, write down the colour of that circle. - The colours belong to the following list - "
        f"{PALETTE_LIST} - No colour is repeated - The output should be written in a single line as a comma-separated "
        "list of colours, written in order from the innermost colour to the outermost colour - For example, the "
        "output should be of the form COLOURS: Colour 1 , Colour 2 and so on."),
    "layered_shapes": (
        "- This image contains some shapes that are layered on top of each other in a white background. - The shapes "
        "could be of the following types - [circle, diamond, hexagon, octagon] - The image could also contain a "
        "single shape with no other shapes layered on top of it. - Write down the sequence of shapes from the inside "
        "layer to the outside layer. - If there is a single shape then identify it. - The last line of the output "
        "should be a comma-separated list of shapes without colors, written in order from top to bottom of form "
        "SHAPES : Shape 1 , Shape 2 and so on. - If there is a single shape then write SHAPES : shape-name where "
        "shape-name is the name of the shape seen"),
    "list_colours": (
        "- This is an image with some multi-coloured shapes drawn on top of it - The colours belong to the following "
        f"list - {PALETTE_LIST} - No colour is repeated - Identify the colour of the shapes drawn over the background "
        "image - Form a list of all the colours of the shapes - The output must be given in a single line in the form "
        "of a list of all the colours found"),
    "list_shapes": (
        "- This is an image with some multi-coloured shapes drawn on top of it - The shapes belong to the following "
        "list - [circle, triangle, square, pentagon] - Identify the shapes drawn over the background image - Form a "
        "set of all the unique shapes seen in the image - The output must be given in a single line in the form of a "
        "set of unique shapes found"),
    "locate_circles_colour": (
        "- This is a grid which contains some coloured circles. - The rows and columns are numbered in the grid. - "
        "The coordinate of a cell is given by the row number followed by the column number. - Write down all the "
        "coordinates of the cells which contain a green circle. - The last line of the output should be a "
        "space-separated list of the coordinates of the cells which contain a green circle. - The coordinates should "
        "be in the format (row,column) with the comma and bracket"),
    "locate_circles_shape": (
        "- This is a grid which contains some coloured circles, rectangles and triangles. - The rows and columns are "
        "numbered in the grid. - The coordinate of a cell is given by the row number followed by the column number. - "
        "Write down all the coordinates of the cells which contain a green circle. - The last line of the output "
        "should be a space-separated list of the coordinates of the cells which contain a green circle. - The "
        "coordinates should be in the format (row,column) with the comma and bracket."),
    "match_outline": (
        "- These are two images of some sequence of shapes separated by black horizontal lines - The two images may "
        "also contain a single shape each - The first image consists of rows of shapes and the second image consists "
        "of rows of outlines of shapes - Determine the number of shapes in the first image that match the outlines in "
        "the corresponding row in the second image. - In case each of the two images contain only a single shape, "
        "treat the single shape in each image as a row. - The output must be given in a single line in the form of "
        "ANSWER:x where x is the number of matching shapes"),
    "match_shadow": (
        "- These are two images of some sequence of shapes separated by black horizontal lines - The two images may "
        "also contain a single shape each - The first image consists of rows of shapes and the second image consists "
        "of rows of shadows of those shapes. - Determine the number of shapes in the first image that match the "
        "shadows in the corresponding row in the second image. - In case each of the two images contain only a single "
        "shape, treat the single shape in each image as a row. - The output must be given in a single line in the "
        "form of ANSWER:x where x is the number of matching shadows"),
    "maze_solving": (
        "- This is a maze. - You start from the cell labelled S. - Your goal is to reach cell labelled E through the "
        "shortest path possible. - You can move up, down, left or right. - You cannot move through the black walls. - "
        "You can only move through white cells. - Give the sequence of cells taken to go from S to E. - Last line of "
        "output should be a comma separated line with cell numbers starting with S and ending at E and nothing else."),
    "mirror_image": (
        "- These are two images containing different shapes in different colours - The image consists of a vertical "
        "blue line at the centre. - Some objects of the first image are mirrored along the given vertical line in the "
        "second image. - Other objects in the second image maintain the same positions as in the first image. - "
        "Determine the number of objects that are mirrored in the second image. - The output must be given in a "
        "single line in the form of COUNT: x, where x is the number of being mirrored"),
    "numbered_shapes": (
        "- This is an image with some shapes drawn and numbers written on top of the shapes - Determine the list of "
        "numbers written on top of the circles. - The output must be given in a single line in the form of CIRCLES:x "
        "where x is the list of numbers seen on top of the circles"),
    "sort_circles": (
        "- There are several black circles with different sizes. - The image may also have a single black circle. - "
        "Sort these circles by size, from smallest to largest. - If there is only a single circles, give the number "
        "written on that circle. - Output must only contain the space separated labels of circles in their sorted "
        "order by size."),
    "sort_lines": (
        "- The image has several parallel lines of varying lengths. - The image may also contain only a single line. "
        "- Sort these lines by length, from shortest to longest. - If there is only a single line, give the number of "
        "that line. - Last line of the output must only contain the space separated labels of thee lines in their "
        "sorted order by length and nothing else."),
    "vanishing_objects": (
        "- These are two images containing shapes such as circles, triangles and squares - The images are identical "
        "except for the fact that the second image has a few objects missing - Count the number of missing objects in "
        "the second image - The output must be given in a single line in the form of COUNT:x"),
    # the appendix breaks this prompt across a page after "Determine the number of objects that"; its
    # continuation, printed a page later, is "are mirrored along the horizontal line in the second image"
    "water_image": (
        "- These are two images containing different shapes in different colours - The image consists of a "
        "horizontal blue line at the centre. - Some objects of the first image are mirrored along the given "
        "horizontal line in the second image. - Other objects in the second image maintain the same positions as in "
        "the first image. - Determine the number of objects that are mirrored along the horizontal line in the "
        "second image. - The output must be given in a single line in the form of COUNT: x, where x is the number "
        "of being mirrored"),
}
